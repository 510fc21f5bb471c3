// libgpiod v1/v2 behind rb_gpio.h. The generation is decided by the gpiod.h found on the include
// path; building for v2 on a machine with the v1 header in /usr/include needs the v2 prefix's
// include directory first (scripts/libgpiod-v2), and -DRESEND_GPIOD_V2 turns a mix-up into an error.
#define _GNU_SOURCE
#include "rb_gpio.h"

#include <errno.h>
#include <gpiod.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define RB_GPIOD_V1 1
#else
#define RB_GPIOD_V1 0
#endif

#if defined(RESEND_GPIOD_V2) && RB_GPIOD_V1
#error "RESEND_GPIOD_V2 is set but the gpiod.h found is libgpiod v1: put the v2 include directory first"
#endif

/// Capacity of one read of edge events; the caller reads again while the fd stays readable.
#define RB_EDGE_READ_CAPACITY 16

static void copy_name(char dest[RB_GPIO_NAME_SIZE], const char *src) {
    if (src == NULL) {
        dest[0] = '\0';
        return;
    }
    snprintf(dest, RB_GPIO_NAME_SIZE, "%s", src);
}

/// 1 when fd has data to read now, 0 when not, -1 on error. Keeps the reads below non-blocking
/// without changing the descriptor's flags.
static int readable_now(int fd) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int ready = poll(&pfd, 1, 0);
    if (ready < 0) return -1;
    return ready > 0 && (pfd.revents & POLLIN) ? 1 : 0;
}

// Both generations open and close a chip the same way (gpiod_chip_open takes a path in v1 and v2).
struct rb_gpio_chip { struct gpiod_chip *chip; };

int rb_gpio_chip_open(const char *path, rb_gpio_chip **out) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (chip == NULL) return -1;
    rb_gpio_chip *wrapper = malloc(sizeof *wrapper);
    if (wrapper == NULL) {
        gpiod_chip_close(chip);
        errno = ENOMEM;
        return -1;
    }
    wrapper->chip = chip;
    *out = wrapper;
    return 0;
}

void rb_gpio_chip_close(rb_gpio_chip *chip) {
    if (chip == NULL) return;
    gpiod_chip_close(chip->chip);
    free(chip);
}

#if RB_GPIOD_V1
// ---------------------------------------------------------------------------------------- v1

struct rb_gpio_request { struct gpiod_chip *chip; struct gpiod_line *line; };

int rb_gpio_api_generation(void) { return 1; }
const char *rb_gpio_library_version(void) { return gpiod_version_string(); }
bool rb_gpio_supports_kernel_debounce(void) { return false; }

int rb_gpio_chip_get_info(rb_gpio_chip *chip, struct rb_gpio_chip_info *out) {
    copy_name(out->name, gpiod_chip_name(chip->chip));
    copy_name(out->label, gpiod_chip_label(chip->chip));
    out->num_lines = gpiod_chip_num_lines(chip->chip);
    return 0;
}

int rb_gpio_chip_get_line_info(rb_gpio_chip *chip, unsigned int offset, struct rb_gpio_line_info *out) {
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);  // owned by the chip
    if (line == NULL) return -1;
    if (gpiod_line_update(line) < 0) return -1;
    out->offset = offset;
    copy_name(out->name, gpiod_line_name(line));
    copy_name(out->consumer, gpiod_line_consumer(line));
    out->used = gpiod_line_is_used(line);
    out->is_output = gpiod_line_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_active_state(line) == GPIOD_LINE_ACTIVE_STATE_LOW;
    return 0;
}

static int bias_flags(rb_gpio_bias bias) {
    switch (bias) {
    case RB_GPIO_BIAS_DISABLED: return GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
    case RB_GPIO_BIAS_PULL_UP: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
    case RB_GPIO_BIAS_PULL_DOWN: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
    case RB_GPIO_BIAS_AS_IS: break;
    }
    return 0;
}

/// Opens the chip and finds the line; on success the request owns both.
static int open_line(const char *chip_path, unsigned int offset, rb_gpio_request **out) {
    struct gpiod_chip *chip = gpiod_chip_open(chip_path);
    if (chip == NULL) return -1;
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    rb_gpio_request *request = line == NULL ? NULL : malloc(sizeof *request);
    if (request == NULL) {
        int saved = line == NULL ? errno : ENOMEM;
        gpiod_chip_close(chip);
        errno = saved;
        return -1;
    }
    request->chip = chip;
    request->line = line;
    *out = request;
    return 0;
}

static void free_unrequested(rb_gpio_request *request) {
    int saved = errno;
    gpiod_chip_close(request->chip);
    free(request);
    errno = saved;
}

int rb_gpio_request_input(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                          bool active_low, uint32_t debounce_us, const char *consumer,
                          rb_gpio_request **out) {
    if (debounce_us > 0) {
        errno = EOPNOTSUPP;  // the v1 uAPI has no debounce
        return -1;
    }
    rb_gpio_request *request;
    if (open_line(chip_path, offset, &request) < 0) return -1;
    int flags = bias_flags(bias) | (active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0);
    if (gpiod_line_request_both_edges_events_flags(request->line, consumer, flags) < 0) {
        free_unrequested(request);
        return -1;
    }
    *out = request;
    return 0;
}

static int request_output_v1(const char *chip_path, unsigned int offset, int flags,
                             bool initially_active, const char *consumer, rb_gpio_request **out) {
    rb_gpio_request *request;
    if (open_line(chip_path, offset, &request) < 0) return -1;
    if (gpiod_line_request_output_flags(request->line, consumer, flags, initially_active ? 1 : 0) < 0) {
        free_unrequested(request);
        return -1;
    }
    *out = request;
    return 0;
}

int rb_gpio_request_output(const char *chip_path, unsigned int offset, bool active_low,
                           bool initially_active, const char *consumer, rb_gpio_request **out) {
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    return request_output_v1(chip_path, offset, flags, initially_active, consumer, out);
}

int rb_gpio_request_open_drain_output(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                                      bool active_low, bool initially_active, const char *consumer,
                                      rb_gpio_request **out) {
    int flags = GPIOD_LINE_REQUEST_FLAG_OPEN_DRAIN | bias_flags(bias)
              | (active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0);
    return request_output_v1(chip_path, offset, flags, initially_active, consumer, out);
}

int rb_gpio_request_fd(rb_gpio_request *request) { return gpiod_line_event_get_fd(request->line); }

int rb_gpio_request_get_value(rb_gpio_request *request) { return gpiod_line_get_value(request->line); }

int rb_gpio_request_set_value(rb_gpio_request *request, bool active) {
    return gpiod_line_set_value(request->line, active ? 1 : 0);
}

int rb_gpio_request_read_edges(rb_gpio_request *request, struct rb_gpio_edge *out, unsigned int max) {
    int fd = gpiod_line_event_get_fd(request->line);
    if (fd < 0) return -1;
    int ready = readable_now(fd);
    if (ready <= 0) return ready;
    struct gpiod_line_event events[RB_EDGE_READ_CAPACITY];
    unsigned int wanted = max < RB_EDGE_READ_CAPACITY ? max : RB_EDGE_READ_CAPACITY;
    int count = gpiod_line_event_read_multiple(request->line, events, wanted);
    if (count < 0) return -1;
    for (int i = 0; i < count; i++) {
        out[i].rising = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
        out[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000u + (uint64_t)events[i].ts.tv_nsec;
        out[i].line_seqno = 0;
    }
    return count;
}

void rb_gpio_request_release(rb_gpio_request *request) {
    if (request == NULL) return;
    gpiod_line_release(request->line);
    gpiod_chip_close(request->chip);
    free(request);
}

#else
// ---------------------------------------------------------------------------------------- v2

struct rb_gpio_request {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;  // NULL for outputs
    unsigned int offset;
};

int rb_gpio_api_generation(void) { return 2; }
const char *rb_gpio_library_version(void) { return gpiod_api_version(); }
bool rb_gpio_supports_kernel_debounce(void) { return true; }

int rb_gpio_chip_get_info(rb_gpio_chip *chip, struct rb_gpio_chip_info *out) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip->chip);
    if (info == NULL) return -1;
    copy_name(out->name, gpiod_chip_info_get_name(info));
    copy_name(out->label, gpiod_chip_info_get_label(info));
    out->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return 0;
}

int rb_gpio_chip_get_line_info(rb_gpio_chip *chip, unsigned int offset, struct rb_gpio_line_info *out) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip->chip, offset);
    if (info == NULL) return -1;
    out->offset = offset;
    copy_name(out->name, gpiod_line_info_get_name(info));
    copy_name(out->consumer, gpiod_line_info_get_consumer(info));
    out->used = gpiod_line_info_is_used(info);
    out->is_output = gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_info_is_active_low(info);
    gpiod_line_info_free(info);
    return 0;
}

static enum gpiod_line_bias v2_bias(rb_gpio_bias bias) {
    switch (bias) {
    case RB_GPIO_BIAS_DISABLED: return GPIOD_LINE_BIAS_DISABLED;
    case RB_GPIO_BIAS_PULL_UP: return GPIOD_LINE_BIAS_PULL_UP;
    case RB_GPIO_BIAS_PULL_DOWN: return GPIOD_LINE_BIAS_PULL_DOWN;
    case RB_GPIO_BIAS_AS_IS: break;
    }
    return GPIOD_LINE_BIAS_AS_IS;
}

/// Requests one line with `settings`; frees everything it allocated, keeping errno.
static struct gpiod_line_request *request_one(const char *chip_path, unsigned int offset,
                                              struct gpiod_line_settings *settings,
                                              const char *consumer) {
    struct gpiod_chip *chip = NULL;
    struct gpiod_line_config *line_config = NULL;
    struct gpiod_request_config *request_config = NULL;
    struct gpiod_line_request *request = NULL;

    chip = gpiod_chip_open(chip_path);
    if (chip == NULL) goto done;
    line_config = gpiod_line_config_new();
    request_config = gpiod_request_config_new();
    if (line_config == NULL || request_config == NULL) goto done;
    if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) < 0) goto done;
    gpiod_request_config_set_consumer(request_config, consumer);
    request = gpiod_chip_request_lines(chip, request_config, line_config);

done:;
    int saved = errno;
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    if (chip != NULL) gpiod_chip_close(chip);  // the request keeps its own descriptor
    errno = saved;
    return request;
}

static int wrap_request(struct gpiod_line_request *line_request, unsigned int offset,
                        bool with_buffer, rb_gpio_request **out) {
    struct gpiod_edge_event_buffer *buffer =
        with_buffer ? gpiod_edge_event_buffer_new(RB_EDGE_READ_CAPACITY) : NULL;
    rb_gpio_request *request = malloc(sizeof *request);
    if (request == NULL || (with_buffer && buffer == NULL)) {
        free(request);
        gpiod_edge_event_buffer_free(buffer);
        gpiod_line_request_release(line_request);
        errno = ENOMEM;
        return -1;
    }
    request->request = line_request;
    request->buffer = buffer;
    request->offset = offset;
    *out = request;
    return 0;
}

int rb_gpio_request_input(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                          bool active_low, uint32_t debounce_us, const char *consumer,
                          rb_gpio_request **out) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (settings == NULL) return -1;
    int failed = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) < 0
              || gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) < 0
              || gpiod_line_settings_set_bias(settings, v2_bias(bias)) < 0
              || gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) < 0;
    struct gpiod_line_request *line_request = NULL;
    if (!failed) {
        gpiod_line_settings_set_active_low(settings, active_low);
        gpiod_line_settings_set_debounce_period_us(settings, debounce_us);
        line_request = request_one(chip_path, offset, settings, consumer);
    }
    int saved = errno;
    gpiod_line_settings_free(settings);
    errno = saved;
    if (line_request == NULL) return -1;
    return wrap_request(line_request, offset, true, out);
}

static int request_output_v2(const char *chip_path, unsigned int offset, bool active_low,
                             bool initially_active, enum gpiod_line_drive drive, rb_gpio_bias bias,
                             const char *consumer, rb_gpio_request **out) {
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (settings == NULL) return -1;
    int failed = gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) < 0
              || gpiod_line_settings_set_drive(settings, drive) < 0
              || gpiod_line_settings_set_bias(settings, v2_bias(bias)) < 0
              || gpiod_line_settings_set_output_value(
                     settings, initially_active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) < 0;
    struct gpiod_line_request *line_request = NULL;
    if (!failed) {
        gpiod_line_settings_set_active_low(settings, active_low);
        line_request = request_one(chip_path, offset, settings, consumer);
    }
    int saved = errno;
    gpiod_line_settings_free(settings);
    errno = saved;
    if (line_request == NULL) return -1;
    return wrap_request(line_request, offset, false, out);
}

int rb_gpio_request_output(const char *chip_path, unsigned int offset, bool active_low,
                           bool initially_active, const char *consumer, rb_gpio_request **out) {
    return request_output_v2(chip_path, offset, active_low, initially_active, GPIOD_LINE_DRIVE_PUSH_PULL,
                             RB_GPIO_BIAS_AS_IS, consumer, out);
}

int rb_gpio_request_open_drain_output(const char *chip_path, unsigned int offset, rb_gpio_bias bias,
                                      bool active_low, bool initially_active, const char *consumer,
                                      rb_gpio_request **out) {
    return request_output_v2(chip_path, offset, active_low, initially_active, GPIOD_LINE_DRIVE_OPEN_DRAIN,
                             bias, consumer, out);
}

int rb_gpio_request_fd(rb_gpio_request *request) { return gpiod_line_request_get_fd(request->request); }

int rb_gpio_request_get_value(rb_gpio_request *request) {
    enum gpiod_line_value value = gpiod_line_request_get_value(request->request, request->offset);
    if (value == GPIOD_LINE_VALUE_ERROR) return -1;
    return value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0;
}

int rb_gpio_request_set_value(rb_gpio_request *request, bool active) {
    return gpiod_line_request_set_value(request->request, request->offset,
                                        active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

int rb_gpio_request_read_edges(rb_gpio_request *request, struct rb_gpio_edge *out, unsigned int max) {
    if (request->buffer == NULL) {
        errno = EINVAL;  // an output request has no edge events
        return -1;
    }
    int ready = readable_now(gpiod_line_request_get_fd(request->request));
    if (ready <= 0) return ready;
    size_t wanted = max < RB_EDGE_READ_CAPACITY ? max : RB_EDGE_READ_CAPACITY;
    int count = gpiod_line_request_read_edge_events(request->request, request->buffer, wanted);
    if (count < 0) return -1;
    for (int i = 0; i < count; i++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(request->buffer, (unsigned long)i);
        out[i].rising = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE;
        out[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(event);
        out[i].line_seqno = gpiod_edge_event_get_line_seqno(event);
    }
    return count;
}

void rb_gpio_request_release(rb_gpio_request *request) {
    if (request == NULL) return;
    gpiod_line_request_release(request->request);
    gpiod_edge_event_buffer_free(request->buffer);
    free(request);
}

#endif
