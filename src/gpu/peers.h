/* The GPUs of this machine seen together: how many are visible, and which reach which directly
 * (peer-to-peer): what the multi-GPU scenarios ask of the machine before they measure. The
 * GPUs a multi-GPU scenario drives are the first n visible ones (CUDA_VISIBLE_DEVICES picks
 * them), in a ring: GPU g sends to GPU (g + 1) % n. */
#ifndef SB_PEERS_H
#define SB_PEERS_H

#include "gpu/resources.h"

/* Visible CUDA devices into *n: 0, or SB_EXIT_NODEV recorded (no driver, no device). */
int sb_gpu_count(int *n);

/* Whether every GPU of the ring of n reaches its neighbours' memory directly, both ways
 * (cudaDeviceCanAccessPeer): 1 yes; 0 no, with the first pair that does not in *from, *to;
 * -1 a CUDA error, recorded (SB_EXIT_NODEV). */
int sb_ring_reachable(int n, int *from, int *to);

/* Peer access on between the ring's neighbours, both ways, kept in `res` so that the engine
 * turns it off again after the measurement (pairs someone else turned on are left on). The
 * current device is restored. 0, or the recorded failure's code. */
int sb_ring_peer_access(sb_resources *res, int n);

#endif
