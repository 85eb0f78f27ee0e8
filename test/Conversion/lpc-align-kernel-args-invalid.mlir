// RUN: lpc-opt %s -verify-diagnostics --lpc-align-kernel-args="bytes=12"

// expected-error @below {{lpc-align-kernel-args: bytes must be a power of two, got 12}}
module {
}
