import CanopyRules
import JWTKit
import Testing

@testable import CanopyServer

extension TokenVerifierTests {
    @Test("Verified tokens are cached until their exp, and never used after it")
    func cacheHonoursExpiry() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        let token = try await self.hs256(self.claims(expiresIn: 100))
        await self.expectAccepted(verifier, token)
        #expect(verifier.cachedCount == 1)
        await self.expectAccepted(verifier, token)
        #expect(verifier.cachedCount == 1)
        // Past exp the entry is dropped; within the leeway the token is verified again and passes.
        self.clock.advance(130)
        await self.expectAccepted(verifier, token)
        self.clock.advance(31)
        await self.expectRejected(verifier, token, "has expired")
        // Rejected tokens are not cached.
        _ = await verifier.verify("garbage")
        #expect(verifier.cachedCount == 0)
    }

    @Test("The cache is bounded and skips lookups of expired entries")
    func cacheBounds() {
        var cache = TokenCache(capacity: 100)
        let auth = VerifiedToken(auth: AuthContext(uid: "u"), expiresAt: 50)
        for i in 0..<1000 { cache.insert("token-\(i)", auth, until: 50, now: 0) }
        #expect(cache.count <= 100)
        #expect(cache.lookup("token-999", now: 10) == auth)
        #expect(cache.lookup("token-999", now: 50) == nil)
        #expect(cache.lookup("token-999", now: 10) == nil)
        cache.insert("late", auth, until: 50, now: 60)
        #expect(cache.lookup("late", now: 10) == nil)
        cache.insert(String(repeating: "t", count: TokenCache.maxTokenBytes + 1), auth, until: 50, now: 0)
        #expect(cache.lookup(String(repeating: "t", count: TokenCache.maxTokenBytes + 1), now: 0) == nil)
    }
}
