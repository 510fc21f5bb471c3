// One small GPIO API for Swift, implemented over libgpiod v1 (1.6.x) or v2 (2.x), chosen when
// rb_gpio.c is compiled (v1's gpiod.h defines GPIOD_LINE_BULK_MAX_LINES, v2's does not).
// This header deliberately does not include gpiod.h: Swift sees only these declarations.
//
// Conventions: functions returning int return >= 0 on success and -1 with errno set on failure;
// objects come back through out-parameters. Nothing here prints or aborts.
#ifndef RB_GPIO_H
#define RB_GPIO_H

#include <stdbool.h>
#include <stdint.h>

/// Kernel limit for line names, consumers, chip names and labels, NUL included (GPIO_MAX_NAME_SIZE).
#define RB_GPIO_NAME_SIZE 32

typedef enum rb_gpio_bias {
    RB_GPIO_BIAS_AS_IS = 0,
    RB_GPIO_BIAS_DISABLED = 1,
    RB_GPIO_BIAS_PULL_UP = 2,
    RB_GPIO_BIAS_PULL_DOWN = 3,
} rb_gpio_bias;

struct rb_gpio_chip_info {
    char name[RB_GPIO_NAME_SIZE];   // "gpiochip0"
    char label[RB_GPIO_NAME_SIZE];  // "pinctrl-bcm2711"
    unsigned int num_lines;
};

struct rb_gpio_line_info {
    unsigned int offset;
    char name[RB_GPIO_NAME_SIZE];      // empty when the line is unnamed
    char consumer[RB_GPIO_NAME_SIZE];  // empty when unused or the holder gave no name
    bool used;
    bool is_output;
    bool active_low;
};

/// One edge of a requested input line. `rising` is logical: the kernel applies active-low.
struct rb_gpio_edge {
    bool rising;
    uint64_t timestamp_ns;  // CLOCK_MONOTONIC (v2 default event clock; v1 on kernels >= 5.7)
    uint64_t line_seqno;    // v2: per-line sequence number from 1; v1: always 0 (unknown)
};

typedef struct rb_gpio_chip rb_gpio_chip;
typedef struct rb_gpio_request rb_gpio_request;

/// 1 or 2: the libgpiod API generation this shim was compiled against.
int rb_gpio_api_generation(void);
/// The linked library's version string ("1.6.3", "2.3").
const char *rb_gpio_library_version(void);
/// True when the kernel debounce option can be requested (v2 only).
bool rb_gpio_supports_kernel_debounce(void);

int rb_gpio_chip_open(const char *path, rb_gpio_chip **out);
void rb_gpio_chip_close(rb_gpio_chip *chip);
int rb_gpio_chip_get_info(rb_gpio_chip *chip, struct rb_gpio_chip_info *out);
int rb_gpio_chip_get_line_info(rb_gpio_chip *chip, unsigned int offset, struct rb_gpio_line_info *out);

/// Requests one input line with edge detection on both edges. `debounce_us` > 0 needs v2
/// (EOPNOTSUPP on v1).
int rb_gpio_request_input(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                          bool active_low, uint32_t debounce_us, const char *consumer,
                          rb_gpio_request **out);
/// Requests one output line driven to `initially_active` (logical).
int rb_gpio_request_output(const char *chip_path, unsigned int offset, bool active_low,
                           bool initially_active, const char *consumer, rb_gpio_request **out);
/// Requests one output line as open drain with `bias`, driven to `initially_active` (logical): the
/// line is only ever pulled to its low physical level; at the high level it is released (high
/// impedance). With `active_low`, active means pulled low and inactive means released: a
/// key-matrix row that can never drive against another row. The flag is the uAPI's open-drain
/// request (v1 GPIOHANDLE_REQUEST_OPEN_DRAIN, v2 GPIO_V2_LINE_FLAG_OPEN_DRAIN). Chips without
/// open-drain hardware (the Pi's pinctrl-bcm2835 and pinctrl-rp1, gpio-sim) get it emulated by
/// gpiolib, which switches the line to input for the high level (drivers/gpio/gpiolib.c:
/// gpiod_direction_output and gpio_set_open_drain_value_commit), so released is high-Z either way.
/// `bias` is the released line's pull: an input keeps its pad's pull unless the request sets one
/// (on a Pi GPIO9-27 reset to pull-down). v1: the BIAS_* request flag beside OPEN_DRAIN (uAPI
/// since Linux 5.5); v2: the line settings' bias on the output (a bias needs an explicit
/// direction); gpiolib hands it to the chip (gpio_set_bias). RB_GPIO_BIAS_AS_IS sets none.
int rb_gpio_request_open_drain_output(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                                      bool active_low, bool initially_active, const char *consumer,
                                      rb_gpio_request **out);
/// The descriptor to poll for POLLIN (edge events pending).
int rb_gpio_request_fd(rb_gpio_request *request);
/// 1 when the line is logically active, 0 when inactive, -1 on error.
int rb_gpio_request_get_value(rb_gpio_request *request);
int rb_gpio_request_set_value(rb_gpio_request *request, bool active);
/// Reads up to `max` pending edge events without blocking: returns 0 when none are pending.
int rb_gpio_request_read_edges(rb_gpio_request *request, struct rb_gpio_edge *out, unsigned int max);
void rb_gpio_request_release(rb_gpio_request *request);

#endif
