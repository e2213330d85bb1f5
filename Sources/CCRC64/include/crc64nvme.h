#ifndef MODELCAST_CRC64NVME_H
#define MODELCAST_CRC64NVME_H

#include <stddef.h>
#include <stdint.h>

/// CRC-64/NVME (the checksum S3 calls CRC64NVME): polynomial 0xAD93D23594C93659,
/// reflected, initial value and final XOR all ones. Check value of "123456789":
/// 0xAE8B14860A799888.
///
/// Continues `crc` (0 for a new stream, or a value this function returned) over
/// `length` bytes at `bytes`. Uses carry-less multiplication where the CPU has it.
uint64_t modelcast_crc64nvme_update(uint64_t crc, const void *bytes, size_t length);

/// The CRC of A followed by B, from the CRC of A, the CRC of B and B's length.
uint64_t modelcast_crc64nvme_combine(uint64_t crcA, uint64_t crcB, uint64_t lengthB);

/// 1 when the accelerated path is in use on this CPU, else 0.
int modelcast_crc64nvme_accelerated(void);

#endif
