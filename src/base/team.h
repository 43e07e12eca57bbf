/* A team of host threads, one per rank, that run one job at a time together: how the multi-GPU
 * scenarios give every GPU a host thread of its own inside one process, as a job started with
 * one process per GPU (torchrun) has. The caller hands the team a job and waits until every
 * rank has finished it; meanwhile it is called back now and then (a rank that failed can leave
 * the others blocked on their GPUs: the callback is where the caller unblocks them). No CUDA. */
#ifndef SB_TEAM_H
#define SB_TEAM_H

typedef struct sb_team sb_team;

/* One rank's part of a job. */
typedef void (*sb_team_job)(void *arg, int rank);

/* n threads (1 or more), idle until a job comes; NULL if they cannot be made. */
sb_team *sb_team_new(int n);
int sb_team_size(const sb_team *t);
/* Every rank runs job(arg, rank) once, each on its own thread; returns when all have returned.
 * While it waits, watch(arg) is called on the caller's thread every poll_s seconds (watch may be
 * NULL). */
void sb_team_run(sb_team *t, sb_team_job job, void (*watch)(void *), void *arg, double poll_s);
/* Ends the threads and frees the team (NULL: nothing); not while sb_team_run is under way. */
void sb_team_free(sb_team *t);

#endif
