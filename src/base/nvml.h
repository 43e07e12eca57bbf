/* NVML, loaded with dlopen so that the binary starts on machines without the driver. Only the
 * few calls syncbench uses are declared (the toolkit ships no nvml.h); without NVML every
 * function here fails softly and the figures that need it are left out. */
#ifndef SB_NVML_H
#define SB_NVML_H

#include <stddef.h>

/* Clocks-event (throttle) reason bits, as NVML defines them. */
#define SB_NVML_REASON_GPU_IDLE 0x1ull
#define SB_NVML_REASON_APP_CLOCKS 0x2ull
#define SB_NVML_REASON_SW_POWER_CAP 0x4ull
#define SB_NVML_REASON_HW_SLOWDOWN 0x8ull
#define SB_NVML_REASON_SW_THERMAL 0x20ull
#define SB_NVML_REASON_HW_THERMAL 0x40ull
#define SB_NVML_REASON_HW_POWER_BRAKE 0x80ull
/* The reasons that slow a busy GPU down (idle, application clocks and the like are not). */
#define SB_NVML_THROTTLE_MASK                                                                      \
    (SB_NVML_REASON_SW_POWER_CAP | SB_NVML_REASON_HW_SLOWDOWN | SB_NVML_REASON_SW_THERMAL |        \
     SB_NVML_REASON_HW_THERMAL | SB_NVML_REASON_HW_POWER_BRAKE)

typedef struct sb_clock_sample {
    int valid;
    unsigned sm_mhz;
    unsigned long long reasons;
} sb_clock_sample;

typedef struct sb_nvml_info {
    unsigned sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz; /* 0: unknown */
    unsigned pcie_gen, pcie_width, pcie_max_gen, pcie_max_width;
} sb_nvml_info;

/* 0 if NVML was loaded and initialised. */
int sb_nvml_open(void);
void sb_nvml_close(void);
/* Driver version ("580.159.04"); 0 on success. */
int sb_nvml_driver_version(char *buf, size_t n);
/* Selects the device by PCI bus id ("0000:1B:00.0", as cudaDeviceGetPCIBusId gives it). */
int sb_nvml_select(const char *pci_bus_id);
int sb_nvml_info_get(sb_nvml_info *out);
/* SM clock and clocks-event reasons now (valid = 0 without NVML). */
int sb_nvml_sample(int device, sb_clock_sample *out);

#endif
