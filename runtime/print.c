/* print.c: in progress */
