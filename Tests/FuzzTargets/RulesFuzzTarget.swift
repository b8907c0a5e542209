import CanopyRules

extension FuzzTarget {
    /// The security-rules language: an input is parsed as a rules document (Firebase's lenient
    /// JSON) and, when it loads, evaluated for a few reads and writes.
    ///
    /// Properties (see `RulesFuzzing.check`): a load error points inside the input; evaluating
    /// twice gives the same verdict; a read granted at a path is granted at its children.
    public static let rules = FuzzTarget(
        name: "rules",
        dictionary: [
            #""rules""#, #"".read""#, #"".write""#, #"".validate""#, #"".indexOn""#, #""$uid""#, "auth", "auth.uid", "auth.token", "now",
            "root",
            "data", "newData", "$uid", ".child(", ".parent()", ".val()", ".exists()", ".hasChild(", ".hasChildren(", ".isString()",
            ".isNumber()", ".isBoolean()", ".getPriority()", ".matches(/", "/i", ".length", ".contains(", ".beginsWith(",
            "query.orderByChild",
            "query.limitToFirst", "===", "!==", "&&", "||", "?", ":", "!", "//", "/*", "*/", "true", "false", "null",
        ]
    ) { bytes throws(FuzzFailure) in
        if let failure = RulesFuzzing.check(bytes) { throw FuzzFailure(failure) }
    }
}
