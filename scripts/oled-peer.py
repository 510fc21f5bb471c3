#!/usr/bin/env python3
"""luma.oled (the Python library a Pi user reaches for) on a recording SMBus: transactions and
wire bytes for the same steps as `resend-bench oled` (init + first paint, press, 59 ticks, end).
luma.oled 3.13.0 / luma.core 2.6.0 / smbus2 0.6.1 (pinned by scripts/oled-bench). The bus is
luma's default path (smbus2, "managed": commands as SMBus block writes, data with i2c_rdwr in
4096-byte messages); each transaction's address byte is counted, as in BENCHMARKS.md."""
import sys

import smbus2


class RecordingSMBus:
    transactions = []

    def __init__(self, port=None):
        pass

    def write_i2c_block_data(self, address, register, data):
        RecordingSMBus.transactions.append(2 + len(data))  # address, register (control byte), data

    def i2c_rdwr(self, *messages):
        for message in messages:
            RecordingSMBus.transactions.append(1 + len(list(message)))

    def close(self):
        pass


smbus2.SMBus = RecordingSMBus

from luma.core.interface.serial import i2c  # noqa: E402
from luma.core.render import canvas  # noqa: E402
from luma.oled.device import sh1106, ssd1306  # noqa: E402


def step(device, title, label):
    RecordingSMBus.transactions = []
    with canvas(device) as draw:
        draw.text((0, 0), title, fill="white")
        draw.text((0, 16), label, fill="white")
    return len(RecordingSMBus.transactions), sum(RecordingSMBus.transactions)


def main():
    print("| luma.oled figure (same steps) | controller | transactions | wire bytes (address bytes included) |")
    print("|---|---|---|---|")
    for name, cls in (("ssd1306", ssd1306), ("sh1106", sh1106)):
        RecordingSMBus.transactions = []
        device = cls(i2c(port=1, address=0x3C))
        init = (len(RecordingSMBus.transactions), sum(RecordingSMBus.transactions))
        first = step(device, "Verify", "Get code")
        print(f"| init + first full paint | {name} | {init[0] + first[0]} | {init[1] + first[1]} |")
        press = step(device, "Code sent", "Resend (60)")
        print(f"| press | {name} | {press[0]} | {press[1]} |")
        ticks = [step(device, "Code sent", f"Resend ({s:02d})") for s in range(59, 0, -1)]
        tx = [t[0] for t in ticks]
        wire = [t[1] for t in ticks]
        print(f"| tick (59 ticks: mean / max) | {name} | {sum(tx) / len(tx):.1f} / {max(tx)} | {sum(wire) / len(wire):.1f} / {max(wire)} |")


if __name__ == "__main__":
    sys.exit(main())
