// The i2c-dev constants (function-like or composite macros Swift may not import) and thin wrappers
// over the i2c-dev ioctls, plus libi2c's SMBus helpers (<i2c/smbus.h>, link `i2c`).
// Conventions: -1 (or a negative value) with errno set on failure. libi2c's helpers return
// -errno and leave errno set by the failing ioctl.
#ifndef RB_I2C_H
#define RB_I2C_H

#include <i2c/smbus.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>

/// I2C_FUNCS bits (linux/i2c.h), as plain constants for Swift.
static const unsigned long RB_I2C_FUNC_I2C = I2C_FUNC_I2C;
static const unsigned long RB_I2C_FUNC_SMBUS_QUICK = I2C_FUNC_SMBUS_QUICK;
static const unsigned long RB_I2C_FUNC_SMBUS_READ_BYTE = I2C_FUNC_SMBUS_READ_BYTE;
static const unsigned long RB_I2C_FUNC_SMBUS_WRITE_BYTE = I2C_FUNC_SMBUS_WRITE_BYTE;
static const unsigned long RB_I2C_FUNC_SMBUS_BYTE = I2C_FUNC_SMBUS_BYTE;

/// ioctl(fd, I2C_FUNCS, funcs): what the adapter can do.
int rb_i2c_get_funcs(int fd, unsigned long *funcs);
/// ioctl(fd, I2C_SLAVE, address): the 7-bit address later read()/write() and SMBus calls use.
/// EBUSY when a kernel driver has claimed the address.
int rb_i2c_set_slave(int fd, unsigned int address);

#endif
