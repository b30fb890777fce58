MemcpyHtoD,0x0000000000010000,256
kernel-1.traceg
kernel-2.traceg
