/* dtype.c: in progress */
