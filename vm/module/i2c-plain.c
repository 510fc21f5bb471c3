// SPDX-License-Identifier: GPL-2.0
/*
 * i2c-plain: a plain-I2C test adapter for scripts/vm-test (ResendButton), with one PCF8574-like
 * device on it.
 *
 * Why: i2c-stub speaks SMBus only, so a program on it always takes the one-byte SMBus path. The
 * Raspberry Pi's i2c-bcm2835 advertises I2C_FUNC_I2C | I2C_FUNC_SMBUS_EMUL and takes whole
 * i2c_msgs (drivers/i2c/busses/i2c-bcm2835.c, bcm2835_i2c_func()); this adapter does the same, so
 * i2c-dev's write() reaches it as one message and the program takes its batched path.
 *
 * The device (module parameter `address`, default 0x27, a PCF8574 with all jumpers open):
 * - acknowledges writes; the last byte of a write is the port latch (a PCF8574 drives its
 *   quasi-bidirectional port with each byte it receives);
 * - a read returns the pins: the latch, as nothing outside pulls a pin low (0xff at load, the
 *   PCF8574's power-on level);
 * - while the parameter `present` is 0 it does not acknowledge its address: the transfer ends at
 *   the address byte and master_xfer returns -EREMOTEIO, as i2c-bcm2835 does on a NAK
 *   (bcm2835_i2c_xfer(): `if (i2c_dev->msg_err & BCM2835_I2C_S_ERR) return -EREMOTEIO;`).
 *   Any other address is not acknowledged either (-EREMOTEIO).
 *
 * The bus (module parameter `clock_frequency`, default 100000 Hz, what i2c-bcm2835 uses without a
 * device-tree clock): a transfer takes its wire time, 9 clocks (8 bits and the acknowledge) per
 * byte, an address byte per message, up to and including the address byte a NAK ends it at.
 * master_xfer returns only once that time has passed since it got the transfer, as a real
 * adapter's does (i2c-bcm2835 waits for the controller's DONE interrupt), so a program's wait
 * after a write starts after the last byte has crossed the wire. The wait is an hrtimer sleep to
 * an absolute deadline on CLOCK_MONOTONIC: it can end late (host scheduling), never early.
 *
 * The record (debugfs, <debugfs>/i2c-plain/record): one text line per i2c_msg, in order,
 *     <transaction> <start s.nnnnnnnnn> <end s.nnnnnnnnn> <message>/<messages> <w|r> 0x<address> <ack|nak> <length> <hex bytes|->
 * A transaction is one master_xfer call (one START ... STOP; its messages are joined by repeated
 * STARTs); the times are CLOCK_MONOTONIC (ktime_get_ns()), the clock of the program's own log
 * stamps: start when the adapter got the transfer (its first byte goes on the wire then), end when
 * master_xfer returned, never earlier than start plus the wire time. hd44780-decode lays the bytes
 * out from start at the same rate and checks that end. A NAK'd message is recorded with the bytes
 * that were offered and nothing after it in that transaction. Writing anything to the file clears the
 * record (the transaction numbers go on). When the record is full (4 MiB of text), further lines
 * are dropped and the file ends with a line "overflow <dropped lines>".
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/i2c.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

static unsigned short address = 0x27;
module_param(address, ushort, 0644);
MODULE_PARM_DESC(address, "7-bit address of the PCF8574-like device (default 0x27)");

static bool present = true;
module_param(present, bool, 0644);
MODULE_PARM_DESC(present, "1: the device acknowledges; 0: it has vanished (NAK, -EREMOTEIO)");

static unsigned int clock_frequency = 100000;
module_param(clock_frequency, uint, 0444);
MODULE_PARM_DESC(clock_frequency,
		 "SCL rate in Hz, 10000-3400000 (default 100000): a transfer returns after its wire time at this rate");

#define RECORD_SIZE (4 << 20)
/* The longest line: the fixed fields plus two hex digits per byte of the longest message. */
#define LINE_OVERHEAD 128

static DEFINE_MUTEX(lock);
static char *record;
static size_t record_length;
static unsigned long dropped_lines;
static unsigned long long transactions;
static u8 port = 0xff;
static struct dentry *debug_dir;

/* Appends one line for a message; called with the lock held. */
static void record_message(unsigned long long transaction, u64 start, u64 end, int index, int count,
			   const struct i2c_msg *msg, bool acked)
{
	size_t need = LINE_OVERHEAD + 2 * (size_t)msg->len;
	size_t at;
	int i;

	if (record_length + need > RECORD_SIZE) {
		dropped_lines++;
		return;
	}
	at = record_length;
	at += scnprintf(record + at, RECORD_SIZE - at, "%llu %llu.%09llu %llu.%09llu %d/%d %c 0x%02x %s %u ",
			transaction, start / NSEC_PER_SEC, start % NSEC_PER_SEC, end / NSEC_PER_SEC,
			end % NSEC_PER_SEC, index + 1, count, (msg->flags & I2C_M_RD) ? 'r' : 'w', msg->addr,
			acked ? "ack" : "nak", msg->len);
	if (msg->len == 0)
		at += scnprintf(record + at, RECORD_SIZE - at, "-");
	for (i = 0; i < msg->len; i++)
		at += scnprintf(record + at, RECORD_SIZE - at, "%02x", msg->buf[i]);
	at += scnprintf(record + at, RECORD_SIZE - at, "\n");
	record_length = at;
}

/* Sleeps until CLOCK_MONOTONIC reaches deadline (nanoseconds); never returns before it. */
static void wait_until(u64 deadline)
{
	ktime_t expires = ns_to_ktime(deadline);

	while (ktime_get_ns() < deadline) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_hrtimeout_range(&expires, 0, HRTIMER_MODE_ABS);
	}
}

static int plain_xfer(struct i2c_adapter *adapter, struct i2c_msg *msgs, int num)
{
	u64 start = ktime_get_ns();
	u64 byte_ns = 9ULL * NSEC_PER_SEC / clock_frequency;
	u64 wire_bytes = 0;
	unsigned long long transaction;
	u64 end;
	int sent = 0; /* messages that went on the wire, the NAK'd one included */
	bool nak = false;
	int i, j;

	/* The device's side, at the start: the i2c core serializes transfers on this adapter. */
	mutex_lock(&lock);
	transaction = ++transactions;
	for (i = 0; i < num && !nak; i++) {
		struct i2c_msg *msg = &msgs[i];
		bool acked = READ_ONCE(present) && msg->addr == READ_ONCE(address) &&
			     !(msg->flags & I2C_M_TEN);

		sent++;
		wire_bytes += 1; /* the address byte */
		if (!acked) {
			nak = true;
			break;
		}
		wire_bytes += msg->len;
		if (msg->flags & I2C_M_RD) {
			for (j = 0; j < msg->len; j++)
				msg->buf[j] = port;
		} else if (msg->len > 0) {
			port = msg->buf[msg->len - 1];
		}
	}
	mutex_unlock(&lock);

	wait_until(start + wire_bytes * byte_ns);
	end = ktime_get_ns();

	mutex_lock(&lock);
	for (i = 0; i < sent; i++)
		record_message(transaction, start, end, i, num, &msgs[i], !(nak && i == sent - 1));
	mutex_unlock(&lock);
	return nak ? -EREMOTEIO : num;
}

static u32 plain_functionality(struct i2c_adapter *adapter)
{
	/* What i2c-bcm2835 advertises (bcm2835_i2c_func()). */
	return I2C_FUNC_I2C | I2C_FUNC_SMBUS_EMUL;
}

static const struct i2c_algorithm plain_algorithm = {
	.master_xfer = plain_xfer,
	.functionality = plain_functionality,
};

static struct i2c_adapter plain_adapter = {
	.owner = THIS_MODULE,
	.algo = &plain_algorithm,
	.name = "i2c-plain test adapter",
};

static ssize_t record_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	char tail[40];
	size_t tail_length = 0;
	ssize_t done;

	mutex_lock(&lock);
	if (dropped_lines)
		tail_length = scnprintf(tail, sizeof(tail), "overflow %lu\n", dropped_lines);
	if (*position < record_length) {
		done = simple_read_from_buffer(buffer, count, position, record, record_length);
	} else {
		loff_t in_tail = *position - record_length;

		done = simple_read_from_buffer(buffer, count, &in_tail, tail, tail_length);
		if (done > 0)
			*position += done;
	}
	mutex_unlock(&lock);
	return done;
}

static ssize_t record_write(struct file *file, const char __user *buffer, size_t count,
			    loff_t *position)
{
	mutex_lock(&lock);
	record_length = 0;
	dropped_lines = 0;
	mutex_unlock(&lock);
	return count;
}

static const struct file_operations record_operations = {
	.owner = THIS_MODULE,
	.read = record_read,
	.write = record_write,
	.llseek = default_llseek,
};

static int __init plain_init(void)
{
	int ret;

	if (address < 0x08 || address > 0x77) {
		pr_err("i2c-plain: address 0x%x is outside 0x08-0x77\n", address);
		return -EINVAL;
	}
	if (clock_frequency < 10000 || clock_frequency > 3400000) {
		pr_err("i2c-plain: clock_frequency %u Hz is outside 10000-3400000\n", clock_frequency);
		return -EINVAL;
	}
	record = vmalloc(RECORD_SIZE);
	if (!record)
		return -ENOMEM;
	debug_dir = debugfs_create_dir("i2c-plain", NULL);
	debugfs_create_file("record", 0600, debug_dir, NULL, &record_operations);
	ret = i2c_add_adapter(&plain_adapter);
	if (ret) {
		debugfs_remove_recursive(debug_dir);
		vfree(record);
		return ret;
	}
	return 0;
}

static void __exit plain_exit(void)
{
	i2c_del_adapter(&plain_adapter);
	debugfs_remove_recursive(debug_dir);
	vfree(record);
}

module_init(plain_init);
module_exit(plain_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Plain-I2C test adapter with a recording PCF8574-like device (ResendButton vm-test)");
