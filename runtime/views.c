/* views.c: in progress */
