/* error.c: in progress */
