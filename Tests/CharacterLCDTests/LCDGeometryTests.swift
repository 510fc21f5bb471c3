import CharacterLCD
import Testing

struct LCDGeometryTests {
    @Test(
        "every row starts at its DDRAM address",
        arguments: [
            (LCDGeometry.lcd8x1, 0, UInt8(0x00)),
            (.lcd16x2, 0, 0x00), (.lcd16x2, 1, 0x40),
            (.lcd20x4, 0, 0x00), (.lcd20x4, 1, 0x40), (.lcd20x4, 2, 0x14), (.lcd20x4, 3, 0x54),
            (.lcd40x2, 0, 0x00), (.lcd40x2, 1, 0x40),
        ])
    func rowStarts(geometry: LCDGeometry, row: Int, start: UInt8) {
        #expect(geometry.ddramAddress(row: row, column: 0) == start)
        #expect(geometry.rowStartAddress(row) == start)
    }

    @Test(
        "the last cell of each row is its start plus columns minus one",
        arguments: [
            (LCDGeometry.lcd8x1, 0, UInt8(0x07)),
            (.lcd16x2, 0, 0x0F), (.lcd16x2, 1, 0x4F),
            (.lcd20x4, 0, 0x13), (.lcd20x4, 1, 0x53), (.lcd20x4, 2, 0x27), (.lcd20x4, 3, 0x67),
            (.lcd40x2, 0, 0x27), (.lcd40x2, 1, 0x67),
        ])
    func rowEnds(geometry: LCDGeometry, row: Int, last: UInt8) {
        #expect(geometry.ddramAddress(row: row, column: geometry.columns - 1) == last)
    }

    @Test("the supported table lists the four layouts with their sizes")
    func supportedTable() {
        #expect(LCDGeometry.supported.map(\.name) == ["8x1", "16x2", "20x4", "40x2"])
        #expect(LCDGeometry.supported.map(\.columns) == [8, 16, 20, 40])
        #expect(LCDGeometry.supported.map(\.rows) == [1, 2, 4, 2])
        #expect(LCDGeometry.supported.map(\.usesTwoLineMode) == [false, true, true, true])
    }

    @Test(
        "parsing accepts the supported names",
        arguments: [
            ("8x1", LCDGeometry.lcd8x1), ("16x2", .lcd16x2), ("20x4", .lcd20x4), ("40x2", .lcd40x2),
            ("16X2", .lcd16x2), ("016x02", .lcd16x2),
        ])
    func parsingAccepts(text: String, geometry: LCDGeometry) {
        #expect(LCDGeometry(parsing: text) == geometry)
    }

    @Test(
        "parsing rejects other text",
        arguments: [
            "", "16", "x2", "16x", "16x2x", "16 x2", " 16x2", "16x2 ", "16*2", "16x4", "20x2", "0x0",
            "-16x2", "+16x2", "1600x2", "16x2\n", "１６x2",
        ])
    func parsingRejects(text: String) {
        #expect(LCDGeometry(parsing: text) == nil)
    }

    @Test(
        "only the supported sizes can be made",
        arguments: [
            (16, 2, true), (20, 4, true), (8, 1, true), (40, 2, true),
            (16, 1, false), (16, 4, false), (20, 2, false), (0, 0, false), (-16, 2, false),
        ])
    func sizes(columns: Int, rows: Int, supported: Bool) {
        let geometry = LCDGeometry(columns: columns, rows: rows)
        #expect((geometry != nil) == supported)
        if let geometry {
            #expect(geometry.columns == columns && geometry.rows == rows)
        }
    }

    @Test("a name parses back to its geometry", arguments: LCDGeometry.supported)
    func nameRoundTrip(geometry: LCDGeometry) {
        #expect(LCDGeometry(parsing: geometry.name) == geometry)
        #expect(geometry.cellCount == geometry.columns * geometry.rows)
    }
}
