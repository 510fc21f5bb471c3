import HAL

/// The two 128x64 OLED controllers on the usual I2C modules: Solomon Systech's SSD1306 (0.96"
/// modules) and Sino Wealth's SH1106 (most 1.3" modules). Both take the same control bytes and
/// most of the same commands; they differ in addressing (the SH1106 has page addressing only), in
/// RAM width (SH1106: 132 columns, the 128-pixel glass starting at column 2) and in how the panel
/// voltage is made (SSD1306: charge pump command 0x8D; SH1106: DC-DC command 0xAD).
public enum OLEDController: Hashable, Sendable {
    case ssd1306
    case sh1106

    /// Every controller, in the order the configuration lists them.
    public static let all: [OLEDController] = [.ssd1306, .sh1106]

    /// "ssd1306" or "sh1106", as the configuration spells it.
    public var name: String {
        switch self {
        case .ssd1306: return "ssd1306"
        case .sh1106: return "sh1106"
        }
    }

    /// Returns nil for any other name.
    public init?(name: String) {
        for controller in OLEDController.all where controller.name == name {
            self = controller
            return
        }
        return nil
    }

    /// The GDDRAM column of the glass's leftmost pixel: 0 on the SSD1306; 2 on SH1106 modules,
    /// whose 132-column RAM is centred on the 128-pixel glass (luma.oled's sh1106 writes each page
    /// from column 0x02; Linux's ssd130x takes it as the "solomon,col-offset" property).
    public var columnOffset: Int {
        switch self {
        case .ssd1306: return 0
        case .sh1106: return 2
        }
    }

    /// Columns of GDDRAM: SSD1306 128 (datasheet 8.7), SH1106 132.
    public var ramColumns: Int {
        switch self {
        case .ssd1306: return 128
        case .sh1106: return 132
        }
    }
}

/// The glass both controllers drive on these modules: 128 x 64 pixels, 8 pages of 8 rows.
public enum OLEDGlass {
    public static let width = 128
    public static let height = 64
    /// Rows per GDDRAM page; one data byte is one column of one page, bit 0 the top row.
    public static let rowsPerPage = 8
    public static let pages = height / rowsPerPage
}

/// The control byte that starts every I2C write (SSD1306 Rev 1.1 8.1.5.2; SH1106 "I2C-bus
/// interface"): Co (bit 7) = 0 means every byte after it is of one kind; Co = 1 means exactly one
/// byte follows, then another control byte. D/C# (bit 6) = 0 commands, 1 display data.
enum SSD130xControl {
    /// Co = 0, D/C# = 0: the rest of the transaction are command bytes.
    static let commandStream: UInt8 = 0x00
    /// Co = 0, D/C# = 1: the rest of the transaction are GDDRAM data bytes.
    static let dataStream: UInt8 = 0x40
    /// Co = 1, D/C# = 0: one command byte follows, then another control byte.
    static let singleCommand: UInt8 = 0x80
}

/// Command bytes, by the names of SSD1306 Rev 1.1 table 9-1 ("Command Table") and the SH1106
/// datasheet's command table; the values match Linux's drivers/gpu/drm/solomon/ssd130x.c
/// (`SSD130X_*`) and luma.oled's const.py.
enum SSD130xCommand {
    /// Set lower column start address for page addressing mode (low nibble in bits 3:0).
    static let setLowerColumn: UInt8 = 0x00
    /// Set higher column start address for page addressing mode (high nibble in bits 3:0).
    static let setHigherColumn: UInt8 = 0x10
    /// Set memory addressing mode (SSD1306 only), one argument: horizontal, vertical or page.
    static let setMemoryAddressingMode: UInt8 = 0x20
    static let horizontalAddressing: UInt8 = 0x00
    static let pageAddressing: UInt8 = 0x02
    /// Set column address (SSD1306, horizontal/vertical mode): start, end (0...127).
    static let setColumnAddress: UInt8 = 0x21
    /// Set page address (SSD1306, horizontal/vertical mode): start, end (0...7).
    static let setPageAddress: UInt8 = 0x22
    /// Set display start line 0...63 (in bits 5:0).
    static let setDisplayStartLine: UInt8 = 0x40
    /// Set contrast control, one argument 0...255.
    static let setContrast: UInt8 = 0x81
    /// Charge pump setting (SSD1306), one argument: 0x14 enables the internal pump (bit 4 always
    /// set, bit 2 = enable; ssd130x.c: `BIT(4) | BIT(2)` when `need_chargepump`).
    static let chargePumpSetting: UInt8 = 0x8D
    static let chargePumpEnable: UInt8 = 0x14
    /// Segment re-map: 0xA0 column 0 -> SEG0, 0xA1 column 127 -> SEG0 (the mirror image).
    static let segmentRemapNormal: UInt8 = 0xA0
    static let segmentRemapMirrored: UInt8 = 0xA1
    /// Entire display on: 0xA4 follows RAM content.
    static let followRAM: UInt8 = 0xA4
    /// Normal (0xA6: a set bit is a lit pixel) display.
    static let normalDisplay: UInt8 = 0xA6
    /// Set multiplex ratio, one argument: rows - 1 (0x3F for 64 rows; ssd130x.c: height - 1).
    static let setMultiplexRatio: UInt8 = 0xA8
    /// DC-DC control mode set (SH1106), one argument: 0x8B switches the built-in DC-DC on.
    static let dcdcControl: UInt8 = 0xAD
    static let dcdcOn: UInt8 = 0x8B
    /// Display off (sleep) and on.
    static let displayOff: UInt8 = 0xAE
    static let displayOn: UInt8 = 0xAF
    /// Set page start address for page addressing mode (page in bits 2:0).
    static let setPageStart: UInt8 = 0xB0
    /// COM output scan direction: 0xC0 COM0 first, 0xC8 COM[N-1] first (upside down).
    static let comScanNormal: UInt8 = 0xC0
    static let comScanReversed: UInt8 = 0xC8
    /// Set display offset, one argument: vertical shift by COM (0).
    static let setDisplayOffset: UInt8 = 0xD3
    /// Set display clock divide ratio / oscillator frequency, one argument: bits 3:0 divide - 1,
    /// bits 7:4 frequency. SSD1306 0x80 (ssd130x.c's SSD1306 default: divide 1, frequency 8),
    /// SH1106 0x50 (its default: divide 1, frequency 5).
    static let setClockDivide: UInt8 = 0xD5
    static let clockDivideSSD1306: UInt8 = 0x80
    static let clockDivideSH1106: UInt8 = 0x50
    /// Set pre-charge period, one argument: phase 1 in bits 3:0, phase 2 in bits 7:4 (0xF1 with the
    /// internal charge pump, as Adafruit's SSD1306 library and luma.oled's ssd1306 use; 0x22 is the
    /// reset value and ssd130x.c's default).
    static let setPrechargePeriod: UInt8 = 0xD9
    static let prechargeInternalVCC: UInt8 = 0xF1
    static let prechargeReset: UInt8 = 0x22
    /// Set COM pins hardware configuration, one argument: 0x12 = alternative COM pin
    /// configuration, no left/right remap, the wiring of 128x64 modules (ssd130x.c: BIT(1) |
    /// !com_seq << 4; luma.oled's ssd1306 (128, 64) compins 0x12).
    static let setCOMPins: UInt8 = 0xDA
    static let comPinsAlternative: UInt8 = 0x12
    /// Set VCOMH deselect level, one argument: SSD1306 0x20 (~0.77 Vcc, its reset value and
    /// ssd130x.c's SSD1306 default), SH1106 0x40 (ssd130x.c's SH1106 default).
    static let setVCOMHDeselect: UInt8 = 0xDB
    static let vcomhSSD1306: UInt8 = 0x20
    static let vcomhSH1106: UInt8 = 0x40
}

/// The waits of the power-on sequence.
public enum SSD130xTiming {
    /// SSD1306 Rev 1.1 8.9 ("Power ON sequence"): SEG/COM turn on 100 ms after the display-on
    /// command (tAF); the driver lets that pass before it reports the display ready, so nothing
    /// is drawn while the panel is still dark.
    public static let displayOnSettle = TimeSpan.milliseconds(100)
}
