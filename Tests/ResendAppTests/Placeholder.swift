import Testing

@Test func placeholder_ResendAppTests() { #expect(Bool(true)) }
