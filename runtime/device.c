/* device.c: in progress */
