import CharacterLCD
import HAL
import Testing

/// P6=RS P5=RW P4=E P7=BL (low = on), P0..P3=D4..D7: every line moved from the common layout.
let shuffledWiring = PCF8574Wiring(
    rs: 6, rw: 5, enable: 4, backlight: 7, d4: 0, d5: 1, d6: 2, d7: 3, backlightActiveHigh: false)!

func backpack(wiring: PCF8574Wiring = .common, multiByte: Bool = true) -> (PCF8574Backpack<RecordingBus>, Trace) {
    let trace = Trace()
    let bus = RecordingBus(trace: trace, multiByte: multiByte)
    return (PCF8574Backpack(bus: bus, address: backpackAddress, wiring: wiring), trace)
}

struct PCF8574BackpackTests {
    @Test("an init nibble is E high then E low with the backlight on, in one transaction; set up with E low first while the port is unknown")
    func initNibble() throws {
        var (port, trace) = backpack()
        try port.writeInitNibble(0x3)
        #expect(trace.lines == ["i2c 27 <- 38 3C 38"])
        trace.clear()
        try port.writeInitNibble(0x3)
        #expect(trace.lines == ["i2c 27 <- 3C 38"])
    }

    @Test("the idle byte has E, RS, R/W and the data lines low and the backlight as set")
    func idle() throws {
        var (port, trace) = backpack()
        try port.writeIdle()
        #expect(trace.transactions == ["08"])
        #expect(port.portState == 0x08)
    }

    @Test(
        "each HD44780 byte is four expander bytes, high nibble first, RS from the register, RS set up with E low when it changes",
        arguments: [
            (HD44780Byte.data(0x41), "49 4D 49 1D 19"),  // 'A': RS=1, set up first (the idle port has RS=0)
            (.instruction(0x80), "8C 88 0C 08"),  // set DDRAM address 0: RS stays 0
            (.instruction(0x01), "0C 08 1C 18"),  // clear display
            (.data(0xFF), "F9 FD F9 FD F9"),
        ])
    func byteEncoding(byte: HD44780Byte, expander: String) throws {
        var (port, trace) = backpack()
        try port.writeIdle()
        trace.clear()
        try port.write([byte])
        #expect(trace.transactions == [expander])
    }

    @Test("several HD44780 bytes go in one transaction on a multi-byte bus")
    func batch() throws {
        var (port, trace) = backpack()
        try port.writeIdle()
        trace.clear()
        try port.write([.instruction(0x80), .data(0x41)])
        #expect(trace.transactions == ["8C 88 0C 08 49 4D 49 1D 19"])
        #expect(trace.wireBytes == 10)
    }

    @Test("a bus without multi-byte writes gets one expander byte per transaction")
    func perByteFallback() throws {
        var (port, trace) = backpack(multiByte: false)
        try port.writeIdle()
        trace.clear()
        try port.write([.instruction(0x80), .data(0x41)])
        #expect(trace.transactions == ["8C", "88", "0C", "08", "49", "4D", "49", "1D", "19"])
        #expect(trace.wireBytes == 18)
        trace.clear()
        try port.writeInitNibble(0x2)  // RS was high: set up first
        #expect(trace.transactions == ["28", "2C", "28"])
    }

    @Test("an empty write sends nothing")
    func emptyWrite() throws {
        var (port, trace) = backpack()
        try port.write([])
        #expect(trace.events.isEmpty)
    }

    @Test("the backlight bit follows setBacklight in every later byte")
    func backlight() throws {
        var (port, trace) = backpack()
        try port.setBacklight(false)
        try port.write([.data(0x41)])
        try port.writeInitNibble(0x3)
        try port.setBacklight(true)
        try port.write([.data(0x41)])
        #expect(trace.transactions == ["00", "41 45 41 15 11", "30 34 30", "08", "49 4D 49 1D 19"])
        #expect(port.isBacklightOn)
    }

    @Test("a custom wiring puts RS, E, backlight and data on the wired bits")
    func customWiring() throws {
        var (port, trace) = backpack(wiring: shuffledWiring)
        try port.write([.data(0x41)])
        try port.writeInitNibble(0x3)
        try port.setBacklight(false)  // active low: the bit goes high
        try port.write([.data(0x41)])
        #expect(trace.transactions == ["44 54 44 51 41", "03 13 03", "80", "C4 D4 C4 D1 C1"])
    }

    @Test("each data line of the nibble lands on its wired port bit", arguments: 0..<4)
    func dataLines(line: Int) throws {
        // Data lines in reverse order: D4 on P7 ... D7 on P4; RS/RW/E/BL as usual.
        let reversed = PCF8574Wiring(
            rs: 0, rw: 1, enable: 2, backlight: 3, d4: 7, d5: 6, d6: 5, d7: 4, backlightActiveHigh: true)!
        var (port, trace) = backpack(wiring: reversed)
        try port.writeIdle()
        trace.clear()
        try port.writeInitNibble(UInt8(1 << line))
        let dataBit = UInt8(1 << (7 - line))
        let enableBit: UInt8 = 1 << 2
        let backlightBit: UInt8 = 1 << 3
        #expect(trace.transactions == [hex([dataBit | enableBit | backlightBit, dataBit | backlightBit])])
    }

    @Test("R/W is never driven high")
    func readWriteStaysLow() throws {
        var (port, trace) = backpack(wiring: shuffledWiring)
        try port.write([.data(0xFF), .instruction(0xFF)])
        try port.writeInitNibble(0xF)
        try port.setBacklight(true)
        let rwBit: UInt8 = 1 << 5
        for case .i2c(_, let bytes) in trace.events {
            #expect(bytes.allSatisfy { $0 & rwBit == 0 })
        }
        // 2 x (set-up + 4) for the two bytes (RS changes each time), 2 for the nibble, 1 idle.
        #expect(trace.dataBytes == 10 + 2 + 1)
    }

    @Test("a bus error propagates and the per-byte fallback stops at the failing byte")
    func busErrorPropagates() {
        var (port, trace) = backpack(multiByte: false)
        trace.failFromCall = 2
        #expect(throws: HALError(.injected, operation: "write i2c 27")) {
            try port.write([.data(0x41)])
        }
        #expect(trace.transactions == ["49", "4D"])
    }

    @Test("the common wiring is P0=RS P1=RW P2=E P3=BL high-on P4..P7=D4..D7")
    func commonWiring() {
        let common = PCF8574Wiring.common
        #expect([common.rs, common.rw, common.enable, common.backlight] == [0, 1, 2, 3])
        #expect([common.d4, common.d5, common.d6, common.d7] == [4, 5, 6, 7])
        #expect(common.backlightActiveHigh)
        #expect(common.isValid)
        let spelledOut = PCF8574Wiring(
            rs: 0, rw: 1, enable: 2, backlight: 3, d4: 4, d5: 5, d6: 6, d7: 7, backlightActiveHigh: true)
        #expect(spelledOut == common)
    }

    @Test(
        "a wiring needs eight distinct positions in 0...7",
        arguments: [
            ([0, 1, 2, 3, 4, 5, 6, 7], true),
            ([7, 6, 5, 4, 3, 2, 1, 0], true),
            ([0, 0, 2, 3, 4, 5, 6, 7], false),  // RS and RW share P0
            ([0, 1, 2, 3, 4, 5, 6, 6], false),  // D6 and D7 share P6
            ([0, 1, 2, 7, 4, 5, 6, 7], false),  // backlight on D7's bit
            ([0, 1, 2, 3, 4, 5, 6, 8], false),  // no P8
            ([0, 1, 2, 3, 4, 5, 6, 255], false),
        ] as [([UInt8], Bool)])
    func wiringValidation(positions: [UInt8], valid: Bool) {
        let wiring = PCF8574Wiring(
            rs: positions[0], rw: positions[1], enable: positions[2], backlight: positions[3],
            d4: positions[4], d5: positions[5], d6: positions[6], d7: positions[7], backlightActiveHigh: true)
        #expect((wiring != nil) == valid)
        var mutated = PCF8574Wiring.common
        (mutated.rs, mutated.rw) = (positions[0], positions[1])
        (mutated.enable, mutated.backlight) = (positions[2], positions[3])
        (mutated.d4, mutated.d5, mutated.d6, mutated.d7) = (positions[4], positions[5], positions[6], positions[7])
        #expect(mutated.isValid == valid)
    }
}
