#include "rb_i2c.h"

#include <sys/ioctl.h>

int rb_i2c_get_funcs(int fd, unsigned long *funcs) { return ioctl(fd, I2C_FUNCS, funcs); }

int rb_i2c_set_slave(int fd, unsigned int address) { return ioctl(fd, I2C_SLAVE, (unsigned long)address); }
