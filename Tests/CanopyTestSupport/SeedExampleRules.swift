/// Issue 17's seed example: a city may be written only if the same multi-path update stamps its
/// country's `last_updated` with the server time (`canopy rules test` and the rules engine's tests).
public enum SeedExample {
    public static let rules = """
        {
          "rules": {
            ".read": true,
            "cities": {
              "$id": {
                ".write": "auth != null",
                // the country named by the new city must get last_updated == now in this very write
                ".validate": "newData.hasChildren(['name', 'country'])
                              && newData.parent().parent().child('countries/' + newData.child('country').val() + '/last_updated').val() == now"
              }
            },
            "countries": {
              "$country": {
                "last_updated": { ".write": "auth != null", ".validate": "newData.isNumber()" }
              }
            }
          }
        }
        """
}
