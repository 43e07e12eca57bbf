/* The status datagrams this process sends the launcher (src/record/records.h, SB_AUDIT_ENV_SOCK):
 * they need no disk, so the launcher learns of a process whose records could not be written. A
 * socket is opened for each datagram (a few per process) and closed at once, so that no file
 * descriptor of this library lives in the program, where it could be closed and reused. */
#ifndef SBA_STATUS_H
#define SBA_STATUS_H

/* Reads the socket's name from the environment. Call once, before any send. */
void sba_status_init(void);
/* Sends one datagram; async-signal-safe (socket, sendto, close). Nothing when no launcher. */
void sba_status_send(const char *msg, int len);

#endif
