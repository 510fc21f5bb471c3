// SPDX-License-Identifier: GPL-2.0
/*
 * gpio-keymatrix: a key matrix behind a GPIO chip, for scripts/vm-test (ResendButton).
 *
 * Why not gpio-sim: a gpio-sim output line only stores its value (gpio_sim_set() in
 * drivers/gpio/gpio-sim.c) and an input's level changes only through the `pull` attribute that
 * user space writes, so a pressed key (a column joined to a row) would need a user-space process
 * that watches the rows and rewrites the column's pull. gpio-sim has no notification of an output
 * change, so that process must poll, and a scanner reads the columns microseconds after driving a
 * row: the coupler would lose that race nearly every time. Here the column levels are computed
 * from the rows' drive and the pressed keys inside the chip's get(), on the same call that reads
 * them, so a scan sees the wiring it would see on hardware.
 *
 * The chip (label "gpio-keymatrix"): `rows` + `columns` lines (module parameters, 1-8 each,
 * default 4 and 3), rows first, named "<prefix>R0".."<prefix>R<rows-1>", then
 * "<prefix>C0".."<prefix>C<columns-1>" (`prefix` default "KP_"). Each line is a node; a pressed
 * key (r, c) is a switch between row r and column c. A line drives its node when the consumer set
 * it as an output: low or high. gpiolib drives an open-drain line by switching it to input for
 * "high" (gpiod_direction_output() and gpio_set_open_drain_value_commit() in
 * drivers/gpio/gpiolib.c, when set_config(PIN_CONFIG_DRIVE_OPEN_DRAIN) is not supported, as here),
 * so a released open-drain row does not drive at all, nor does an input or a freed line.
 *
 * Pulls: every line has a bias (none, pull-up, pull-down), like a pad's pull resistor. At load
 * and on a write of `pulls` (debugfs) each line takes its reset pull, as a Raspberry Pi's pads do
 * at power-on (BCM2835 ARM Peripherals, the GPIO pull table: GPIO0-8 up, GPIO9-27 down). A
 * consumer's bias request reaches the chip through set_config(PIN_CONFIG_BIAS_PULL_UP/DOWN/
 * DISABLE) (gpio_set_bias() in drivers/gpio/gpiolib.c); a request with bias "as is" does not call
 * it, so the line keeps the pull it had. A released open-drain row is an input (above) and keeps
 * its pull too. Freeing a line keeps its pull, as the Pi's pinctrl does (only the function goes
 * back to input).
 *
 * Levels (what get() returns for an input; an output reads its own drive):
 * - without diodes (`diodes=0`, default): the pressed keys join nodes into groups; a group with a
 *   line driven low reads 0, else one driven high reads 1, else its pulls: 0 if a line in it has a
 *   pull-down and none a pull-up, 1 if one has a pull-up and none a pull-down (or no line has a
 *   pull: floating, which this model reads as 1). A pull-up against a pull-down (two pads' 50-65
 *   kOhm resistors through a key) sits near the middle of the supply, inside the undefined band
 *   of the input (Pi 4: VIL 0.8 V, VIH 2.0 V): this model reads that group as 0, deterministically
 *   (the worst case for a scanner: the key shows in every row it scans, a phantom key), and records
 *   `undefined`. A group with a line driven low AND one driven high is a short: two outputs driven
 *   against each other; it reads 0 and is recorded as `short`. So three keys of a rectangle give a
 *   ghost.
 * - with diodes (`diodes=1`, writable at run time; a diode per key, anode on the column): a
 *   column reads 0 iff a pressed key joins it to a row driven low (or it drives low itself), or
 *   to an undriven row with a pull-down while the column has a pull-up (undefined, as above: the
 *   divider plus a diode drop is still mid-supply), else its own drive or bias; a row reads its
 *   own drive or bias; a short is a column driven high into a row driven low through a pressed
 *   key.
 * Edges: after every change (a line's direction, value or bias, a key) the levels are computed
 * again and every input line whose level changed gets an interrupt through irq_sim when its
 * trigger type asks for that edge (irq_set_irqchip_state(IRQCHIP_STATE_PENDING), as gpio-sim's
 * gpio_sim_apply_pull() does), so a consumer's edge events (libgpiod v1 and v2) see key presses
 * and scans.
 *
 * Control and record, in debugfs <debugfs>/gpio-keymatrix/:
 * - `keys`: write "press R C", "release R C" or "release all" (one command per write); read: the
 *   pressed keys, one "R C" line each.
 * - `lines`: read: one line per GPIO line, "<name> <in|out> <drive: none|low|high>
 *   <bias: none|up|down> <level>".
 * - `pulls`: the reset pulls, one letter per line in line order (rows, then columns): `u` up,
 *   `d` down, `n` none; read: that string. Write such a string (spaces ignored, lines not given
 *   get `n`) to set them and reset every line's bias to them, as a power cycle would; refused
 *   (EBUSY) while a line is requested. The module parameter `pulls` gives them at load (default:
 *   all `n`).
 * - `record`: one line per event, in order, "<seconds.nanoseconds> <what>", the time
 *   CLOCK_MONOTONIC (ktime_get_ns(), the clock of the program's log):
 *       <t> drive <name> none|low|high     a line's drive changed
 *       <t> key <r> <c> down|up            a key was pressed or released
 *       <t> edge <name> rising|falling     an interrupt was raised on a requested input line
 *       <t> short <name> <name>...         lines driven low and high were joined (see above)
 *       <t> undefined <name> <name>...     undriven lines with a pull-up and a pull-down were
 *                                          joined: they read 0 (see above)
 *   Writing anything clears it. It holds 2 MiB of text; past that, lines are dropped and the
 *   file ends with "overflow <count>".
 * - `shorts`: read: how many shorts began since the module was loaded (never cleared).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gpio/driver.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_sim.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define MAX_SIDE 8
#define MAX_LINES (2 * MAX_SIDE)

static unsigned int rows = 4;
module_param(rows, uint, 0444);
MODULE_PARM_DESC(rows, "number of row lines, 1-8 (default 4)");

static unsigned int columns = 3;
module_param(columns, uint, 0444);
MODULE_PARM_DESC(columns, "number of column lines, 1-8 (default 3)");

static char *prefix = "KP_";
module_param(prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "line name prefix: <prefix>R0.., <prefix>C0.. (default KP_)");

static bool diodes;
module_param(diodes, bool, 0644);
MODULE_PARM_DESC(diodes, "1: a diode per key (no ghost keys, no shorts through keys); read at each change");

static char *pulls = "";
module_param(pulls, charp, 0444);
MODULE_PARM_DESC(pulls, "reset pulls, one letter per line (rows, then columns): u up, d down, n none (default all n)");

enum drive { DRIVE_NONE, DRIVE_LOW, DRIVE_HIGH };
enum bias { BIAS_NONE, BIAS_UP, BIAS_DOWN };
static const char *const drive_names[] = { "none", "low", "high" };
static const char *const bias_names[] = { "none", "up", "down" };

struct keymatrix {
	struct gpio_chip gc;
	struct mutex lock;
	struct irq_domain *irq_sim;
	struct platform_device *pdev;
	struct dentry *debug_dir;
	unsigned int lines;
	char *names[MAX_LINES];
	bool output[MAX_LINES];
	bool value[MAX_LINES];	/* the output value (meaningful while output) */
	enum bias bias[MAX_LINES];
	enum bias reset_bias[MAX_LINES];	/* the pad's pull at power-on (`pulls`) */
	bool level[MAX_LINES];	/* the last computed level */
	bool pressed[MAX_SIDE][MAX_SIDE];
	unsigned long shorted;	/* bit per line: in a shorted group at the last computation */
	unsigned long undefined;	/* bit per line: at an undefined level at the last computation */
	unsigned long shorts;
	char *record;
	size_t record_length;
	unsigned long dropped;
};

static struct keymatrix *km;

#define RECORD_SIZE (2 << 20)
#define RECORD_LINE_MAX 160

static void record_event(struct keymatrix *m, const char *fmt, ...) __printf(2, 3);
static void record_event(struct keymatrix *m, const char *fmt, ...)
{
	u64 ns = ktime_get_ns();
	va_list args;
	size_t at;

	if (m->record_length + RECORD_LINE_MAX > RECORD_SIZE) {
		m->dropped++;
		return;
	}
	at = m->record_length;
	at += scnprintf(m->record + at, RECORD_SIZE - at, "%llu.%09llu ", ns / NSEC_PER_SEC,
			ns % NSEC_PER_SEC);
	va_start(args, fmt);
	at += vscnprintf(m->record + at, RECORD_SIZE - at, fmt, args);
	va_end(args);
	at += scnprintf(m->record + at, RECORD_SIZE - at, "\n");
	m->record_length = at;
}

static enum drive drive_of(struct keymatrix *m, unsigned int line)
{
	if (!m->output[line])
		return DRIVE_NONE;
	return m->value[line] ? DRIVE_HIGH : DRIVE_LOW;
}

static bool bias_level(struct keymatrix *m, unsigned int line)
{
	return m->bias[line] != BIAS_DOWN;
}

/* Without diodes: the group (bit per line) of a line through pressed keys. */
static unsigned long group_of(struct keymatrix *m, unsigned int start)
{
	unsigned long group = BIT(start), before;
	unsigned int r, c;

	do {
		before = group;
		for (r = 0; r < rows; r++)
			for (c = 0; c < columns; c++)
				if (m->pressed[r][c] &&
				    ((group & BIT(r)) || (group & BIT(rows + c))))
					group |= BIT(r) | BIT(rows + c);
	} while (group != before);
	return group;
}

/*
 * Computes every line's level into levels[]; returns the lines in shorted groups and sets
 * *undefined to the lines at an undefined level (a pull-up against a pull-down, read as 0).
 */
static unsigned long compute_levels(struct keymatrix *m, bool *levels, unsigned long *undefined)
{
	unsigned long shorted = 0;

	*undefined = 0;
	unsigned int line, other, r, c;

	if (!READ_ONCE(diodes)) {
		for (line = 0; line < m->lines; line++) {
			unsigned long group = group_of(m, line);
			bool low = false, high = false, up = false, down = false;

			for (other = 0; other < m->lines; other++) {
				if (!(group & BIT(other)))
					continue;
				switch (drive_of(m, other)) {
				case DRIVE_LOW: low = true; break;
				case DRIVE_HIGH: high = true; break;
				default: break;
				}
				if (m->bias[other] == BIAS_UP)
					up = true;
				if (m->bias[other] == BIAS_DOWN)
					down = true;
			}
			if (low && high)
				shorted |= BIT(line);
			if (low)
				levels[line] = false;
			else if (high)
				levels[line] = true;
			else if (up && down) {
				levels[line] = false;
				*undefined |= BIT(line);
			} else
				levels[line] = !down;
		}
		return shorted;
	}
	for (line = 0; line < m->lines; line++) {
		enum drive d = drive_of(m, line);

		levels[line] = d == DRIVE_NONE ? bias_level(m, line) : d == DRIVE_HIGH;
	}
	for (r = 0; r < rows; r++)
		for (c = 0; c < columns; c++) {
			if (!m->pressed[r][c])
				continue;
			if (drive_of(m, r) == DRIVE_NONE && m->bias[r] == BIAS_DOWN &&
			    drive_of(m, rows + c) == DRIVE_NONE && m->bias[rows + c] == BIAS_UP) {
				levels[rows + c] = false;
				*undefined |= BIT(r) | BIT(rows + c);
				continue;
			}
			if (drive_of(m, r) != DRIVE_LOW)
				continue;
			levels[rows + c] = false;
			if (drive_of(m, rows + c) == DRIVE_HIGH)
				shorted |= BIT(r) | BIT(rows + c);
		}
	return shorted;
}

/* After any change, with the lock held: new levels, edges, shorts. */
static void update(struct keymatrix *m)
{
	bool levels[MAX_LINES];
	unsigned long shorted, undefined;
	unsigned int line;

	shorted = compute_levels(m, levels, &undefined);
	if (undefined && undefined != m->undefined) {
		char names[MAX_LINES * 12] = "";
		size_t at = 0;

		for (line = 0; line < m->lines; line++)
			if (undefined & BIT(line))
				at += scnprintf(names + at, sizeof(names) - at, " %s", m->names[line]);
		record_event(m, "undefined%s", names);
	}
	m->undefined = undefined;
	if (shorted && shorted != m->shorted) {
		char names[MAX_LINES * 12] = "";
		size_t at = 0;

		for (line = 0; line < m->lines; line++)
			if (shorted & BIT(line))
				at += scnprintf(names + at, sizeof(names) - at, " %s", m->names[line]);
		record_event(m, "short%s", names);
		if (!(m->shorted & shorted))
			m->shorts++;
		pr_warn("gpio-keymatrix: outputs driven against each other:%s\n", names);
	}
	m->shorted = shorted;
	for (line = 0; line < m->lines; line++) {
		bool old = m->level[line], now = levels[line];
		int irq, type;

		m->level[line] = now;
		if (old == now || m->output[line])
			continue;
		/* No mapping: nobody asked for this line's interrupts (gpio-sim reasons alike). */
		irq = irq_find_mapping(m->irq_sim, line);
		if (!irq || !irq_has_action(irq))
			continue;
		type = irq_get_trigger_type(irq);
		if ((now && (type & IRQ_TYPE_EDGE_RISING)) || (!now && (type & IRQ_TYPE_EDGE_FALLING))) {
			if (!irq_set_irqchip_state(irq, IRQCHIP_STATE_PENDING, true))
				record_event(m, "edge %s %s", m->names[line], now ? "rising" : "falling");
		}
	}
}

/* Sets a line's direction and value, recording a change of its drive; lock held. */
static void assign_line(struct keymatrix *m, unsigned int line, bool output, bool value)
{
	enum drive before = drive_of(m, line), after;

	m->output[line] = output;
	if (output)
		m->value[line] = value;
	after = drive_of(m, line);
	if (after != before)
		record_event(m, "drive %s %s", m->names[line], drive_names[after]);
}

static void set_line(struct keymatrix *m, unsigned int line, bool output, bool value)
{
	assign_line(m, line, output, value);
	update(m);
}

static int km_get(struct gpio_chip *gc, unsigned int offset)
{
	struct keymatrix *m = gpiochip_get_data(gc);
	int ret;

	mutex_lock(&m->lock);
	ret = m->output[offset] ? m->value[offset] : m->level[offset];
	mutex_unlock(&m->lock);
	return ret;
}

static int km_get_multiple(struct gpio_chip *gc, unsigned long *mask, unsigned long *bits)
{
	struct keymatrix *m = gpiochip_get_data(gc);
	unsigned int line;

	mutex_lock(&m->lock);
	for (line = 0; line < m->lines; line++)
		if (test_bit(line, mask))
			__assign_bit(line, bits, m->output[line] ? m->value[line] : m->level[line]);
	mutex_unlock(&m->lock);
	return 0;
}

static void km_set(struct gpio_chip *gc, unsigned int offset, int value)
{
	struct keymatrix *m = gpiochip_get_data(gc);

	mutex_lock(&m->lock);
	set_line(m, offset, m->output[offset], value);
	mutex_unlock(&m->lock);
}

static void km_set_multiple(struct gpio_chip *gc, unsigned long *mask, unsigned long *bits)
{
	struct keymatrix *m = gpiochip_get_data(gc);
	unsigned int line;

	mutex_lock(&m->lock);
	/* All at once, as one register write would: one computation of the levels. */
	for (line = 0; line < m->lines; line++)
		if (test_bit(line, mask))
			assign_line(m, line, m->output[line], test_bit(line, bits));
	update(m);
	mutex_unlock(&m->lock);
}

static int km_direction_output(struct gpio_chip *gc, unsigned int offset, int value)
{
	struct keymatrix *m = gpiochip_get_data(gc);

	mutex_lock(&m->lock);
	set_line(m, offset, true, value);
	mutex_unlock(&m->lock);
	return 0;
}

static int km_direction_input(struct gpio_chip *gc, unsigned int offset)
{
	struct keymatrix *m = gpiochip_get_data(gc);

	mutex_lock(&m->lock);
	set_line(m, offset, false, false);
	mutex_unlock(&m->lock);
	return 0;
}

static int km_get_direction(struct gpio_chip *gc, unsigned int offset)
{
	struct keymatrix *m = gpiochip_get_data(gc);
	bool output;

	mutex_lock(&m->lock);
	output = m->output[offset];
	mutex_unlock(&m->lock);
	return output ? GPIO_LINE_DIRECTION_OUT : GPIO_LINE_DIRECTION_IN;
}

/*
 * Bias only. PIN_CONFIG_DRIVE_OPEN_DRAIN is -ENOTSUPP on purpose: gpiolib then emulates open
 * drain through direction_input() for "high" (gpiod_direction_output() in gpiolib.c), which is
 * the undriven state this model needs to see.
 */
static int km_set_config(struct gpio_chip *gc, unsigned int offset, unsigned long config)
{
	struct keymatrix *m = gpiochip_get_data(gc);
	enum bias bias;

	switch (pinconf_to_config_param(config)) {
	case PIN_CONFIG_BIAS_PULL_UP: bias = BIAS_UP; break;
	case PIN_CONFIG_BIAS_PULL_DOWN: bias = BIAS_DOWN; break;
	case PIN_CONFIG_BIAS_DISABLE: bias = BIAS_NONE; break;
	default: return -ENOTSUPP;
	}
	mutex_lock(&m->lock);
	m->bias[offset] = bias;
	update(m);
	mutex_unlock(&m->lock);
	return 0;
}

static int km_to_irq(struct gpio_chip *gc, unsigned int offset)
{
	struct keymatrix *m = gpiochip_get_data(gc);

	return irq_create_mapping(m->irq_sim, offset);
}

/*
 * A freed line drives nothing and keeps its pull, whatever its consumer left it as: the Pi's
 * pinctrl-bcm2835 sets a freed pin's function back to input and leaves its pull alone.
 */
static void km_free(struct gpio_chip *gc, unsigned int offset)
{
	struct keymatrix *m = gpiochip_get_data(gc);

	mutex_lock(&m->lock);
	set_line(m, offset, false, false);
	mutex_unlock(&m->lock);
}

/* --- debugfs --------------------------------------------------------------------------------- */

/* Parses a `pulls` string into out[] (lines not given: none); -EINVAL on another letter. */
static int parse_pulls(const char *text, unsigned int lines, enum bias *out)
{
	unsigned int line = 0;

	for (; line < lines; line++)
		out[line] = BIAS_NONE;
	for (line = 0; *text; text++) {
		enum bias bias;

		switch (*text) {
		case 'u': bias = BIAS_UP; break;
		case 'd': bias = BIAS_DOWN; break;
		case 'n': bias = BIAS_NONE; break;
		case ' ': case '\t': case '\n': continue;
		default: return -EINVAL;
		}
		if (line >= lines)
			return -EINVAL;
		out[line++] = bias;
	}
	return 0;
}

static ssize_t pulls_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	static const char letters[] = { 'n', 'u', 'd' };
	char text[MAX_LINES + 2];
	unsigned int line;

	mutex_lock(&km->lock);
	for (line = 0; line < km->lines; line++)
		text[line] = letters[km->reset_bias[line]];
	mutex_unlock(&km->lock);
	text[line] = '\n';
	return simple_read_from_buffer(buffer, count, position, text, line + 1);
}

static ssize_t pulls_write(struct file *file, const char __user *buffer, size_t count,
			   loff_t *position)
{
	enum bias parsed[MAX_LINES];
	char text[4 * MAX_LINES];
	unsigned int line;
	int ret;

	if (count >= sizeof(text))
		return -EINVAL;
	if (copy_from_user(text, buffer, count))
		return -EFAULT;
	text[count] = '\0';
	ret = parse_pulls(text, km->lines, parsed);
	if (ret)
		return ret;
	mutex_lock(&km->lock);
	for (line = 0; line < km->lines; line++)
		if (gpiochip_is_requested(&km->gc, line)) {
			mutex_unlock(&km->lock);
			return -EBUSY;
		}
	for (line = 0; line < km->lines; line++) {
		km->reset_bias[line] = parsed[line];
		km->bias[line] = parsed[line];
	}
	update(km);
	mutex_unlock(&km->lock);
	return count;
}

static const struct file_operations pulls_operations = {
	.owner = THIS_MODULE,
	.read = pulls_read,
	.write = pulls_write,
	.llseek = default_llseek,
};

static ssize_t keys_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	char text[MAX_SIDE * MAX_SIDE * 6 + 1];
	size_t length = 0;
	unsigned int r, c;

	mutex_lock(&km->lock);
	for (r = 0; r < rows; r++)
		for (c = 0; c < columns; c++)
			if (km->pressed[r][c])
				length += scnprintf(text + length, sizeof(text) - length, "%u %u\n", r, c);
	mutex_unlock(&km->lock);
	return simple_read_from_buffer(buffer, count, position, text, length);
}

static ssize_t keys_write(struct file *file, const char __user *buffer, size_t count,
			  loff_t *position)
{
	char text[40];
	unsigned int r, c;
	bool down;
	int fields;
	char verb[12];

	if (count >= sizeof(text))
		return -EINVAL;
	if (copy_from_user(text, buffer, count))
		return -EFAULT;
	text[count] = '\0';
	if (sysfs_streq(text, "release all")) {
		mutex_lock(&km->lock);
		for (r = 0; r < rows; r++)
			for (c = 0; c < columns; c++)
				if (km->pressed[r][c]) {
					km->pressed[r][c] = false;
					record_event(km, "key %u %u up", r, c);
				}
		update(km);
		mutex_unlock(&km->lock);
		return count;
	}
	fields = sscanf(text, "%11s %u %u", verb, &r, &c);
	if (fields != 3 || r >= rows || c >= columns)
		return -EINVAL;
	if (!strcmp(verb, "press"))
		down = true;
	else if (!strcmp(verb, "release"))
		down = false;
	else
		return -EINVAL;
	mutex_lock(&km->lock);
	if (km->pressed[r][c] != down) {
		km->pressed[r][c] = down;
		record_event(km, "key %u %u %s", r, c, down ? "down" : "up");
		update(km);
	}
	mutex_unlock(&km->lock);
	return count;
}

static const struct file_operations keys_operations = {
	.owner = THIS_MODULE,
	.read = keys_read,
	.write = keys_write,
	.llseek = default_llseek,
};

static ssize_t lines_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	char text[MAX_LINES * 48];
	size_t length = 0;
	unsigned int line;

	mutex_lock(&km->lock);
	for (line = 0; line < km->lines; line++)
		length += scnprintf(text + length, sizeof(text) - length, "%s %s %s %s %d\n",
				    km->names[line], km->output[line] ? "out" : "in",
				    drive_names[drive_of(km, line)], bias_names[km->bias[line]],
				    km->output[line] ? km->value[line] : km->level[line]);
	mutex_unlock(&km->lock);
	return simple_read_from_buffer(buffer, count, position, text, length);
}

static const struct file_operations lines_operations = {
	.owner = THIS_MODULE,
	.read = lines_read,
	.llseek = default_llseek,
};

static ssize_t record_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	char tail[40];
	size_t tail_length = 0;
	ssize_t done;

	mutex_lock(&km->lock);
	if (km->dropped)
		tail_length = scnprintf(tail, sizeof(tail), "overflow %lu\n", km->dropped);
	if (*position < km->record_length) {
		done = simple_read_from_buffer(buffer, count, position, km->record, km->record_length);
	} else {
		loff_t in_tail = *position - km->record_length;

		done = simple_read_from_buffer(buffer, count, &in_tail, tail, tail_length);
		if (done > 0)
			*position += done;
	}
	mutex_unlock(&km->lock);
	return done;
}

static ssize_t record_write(struct file *file, const char __user *buffer, size_t count,
			    loff_t *position)
{
	mutex_lock(&km->lock);
	km->record_length = 0;
	km->dropped = 0;
	mutex_unlock(&km->lock);
	return count;
}

static const struct file_operations record_operations = {
	.owner = THIS_MODULE,
	.read = record_read,
	.write = record_write,
	.llseek = default_llseek,
};

static ssize_t shorts_read(struct file *file, char __user *buffer, size_t count, loff_t *position)
{
	char text[24];
	size_t length;

	mutex_lock(&km->lock);
	length = scnprintf(text, sizeof(text), "%lu\n", km->shorts);
	mutex_unlock(&km->lock);
	return simple_read_from_buffer(buffer, count, position, text, length);
}

static const struct file_operations shorts_operations = {
	.owner = THIS_MODULE,
	.read = shorts_read,
	.llseek = default_llseek,
};

/* --- module ---------------------------------------------------------------------------------- */

static void km_release(struct keymatrix *m)
{
	unsigned int line;

	for (line = 0; line < m->lines; line++)
		kfree(m->names[line]);
	vfree(m->record);
	kfree(m);
}

static int __init km_init(void)
{
	struct keymatrix *m;
	struct gpio_chip *gc;
	unsigned int line;
	int ret;

	if (rows < 1 || rows > MAX_SIDE || columns < 1 || columns > MAX_SIDE) {
		pr_err("gpio-keymatrix: rows=%u columns=%u: each must be 1-%d\n", rows, columns, MAX_SIDE);
		return -EINVAL;
	}
	if (strlen(prefix) > 8) {
		pr_err("gpio-keymatrix: prefix \"%s\" is longer than 8 characters\n", prefix);
		return -EINVAL;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	mutex_init(&m->lock);
	m->lines = rows + columns;
	m->record = vmalloc(RECORD_SIZE);
	if (!m->record) {
		km_release(m);
		return -ENOMEM;
	}
	if (parse_pulls(pulls, m->lines, m->reset_bias)) {
		pr_err("gpio-keymatrix: pulls=\"%s\": one of u, d, n per line (%u lines)\n", pulls, m->lines);
		km_release(m);
		return -EINVAL;
	}
	for (line = 0; line < m->lines; line++) {
		m->names[line] = line < rows ? kasprintf(GFP_KERNEL, "%sR%u", prefix, line)
					     : kasprintf(GFP_KERNEL, "%sC%u", prefix, line - rows);
		if (!m->names[line]) {
			km_release(m);
			return -ENOMEM;
		}
	}
	/* Nothing driven, no key: every line reads its reset pull (floating reads 1 in this model). */
	for (line = 0; line < m->lines; line++) {
		m->bias[line] = m->reset_bias[line];
		m->level[line] = m->bias[line] != BIAS_DOWN;
	}

	m->pdev = platform_device_register_simple("gpio-keymatrix", PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(m->pdev)) {
		ret = PTR_ERR(m->pdev);
		km_release(m);
		return ret;
	}
	m->irq_sim = irq_domain_create_sim(NULL, m->lines);
	if (IS_ERR(m->irq_sim)) {
		ret = PTR_ERR(m->irq_sim);
		platform_device_unregister(m->pdev);
		km_release(m);
		return ret;
	}
	gc = &m->gc;
	gc->label = "gpio-keymatrix";
	gc->parent = &m->pdev->dev;
	gc->owner = THIS_MODULE;
	gc->base = -1;
	gc->ngpio = m->lines;
	gc->names = (const char *const *)m->names;
	gc->get = km_get;
	gc->get_multiple = km_get_multiple;
	gc->set = km_set;
	gc->set_multiple = km_set_multiple;
	gc->direction_output = km_direction_output;
	gc->direction_input = km_direction_input;
	gc->get_direction = km_get_direction;
	gc->set_config = km_set_config;
	gc->to_irq = km_to_irq;
	gc->free = km_free;
	gc->can_sleep = true;
	km = m;
	ret = gpiochip_add_data(gc, m);
	if (ret) {
		km = NULL;
		irq_domain_remove_sim(m->irq_sim);
		platform_device_unregister(m->pdev);
		km_release(m);
		return ret;
	}
	m->debug_dir = debugfs_create_dir("gpio-keymatrix", NULL);
	debugfs_create_file("keys", 0600, m->debug_dir, NULL, &keys_operations);
	debugfs_create_file("lines", 0400, m->debug_dir, NULL, &lines_operations);
	debugfs_create_file("record", 0600, m->debug_dir, NULL, &record_operations);
	debugfs_create_file("shorts", 0400, m->debug_dir, NULL, &shorts_operations);
	debugfs_create_file("pulls", 0600, m->debug_dir, NULL, &pulls_operations);
	return 0;
}

static void __exit km_exit(void)
{
	struct keymatrix *m = km;
	unsigned int line;

	debugfs_remove_recursive(m->debug_dir);
	gpiochip_remove(&m->gc);
	for (line = 0; line < m->lines; line++)
		irq_dispose_mapping(irq_find_mapping(m->irq_sim, line));
	irq_domain_remove_sim(m->irq_sim);
	platform_device_unregister(m->pdev);
	km_release(m);
}

module_init(km_init);
module_exit(km_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("A key matrix behind a GPIO chip: column levels follow the driven rows and the pressed keys (ResendButton vm-test)");
