import Testing

@Test func placeholder_CharacterLCDTests() { #expect(Bool(true)) }
