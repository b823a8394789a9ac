/* iter.c: in progress */
