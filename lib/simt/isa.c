/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in SASS opcode table: unit, profiler class and memory kind of every base opcode. */
#include "simt_impl.h"

/*
 * The union of the instruction sets NVIDIA's CUDA Binary Utilities
 * documentation lists for Maxwell/Pascal (sm_5x, sm_6x), Volta/Turing
 * (sm_7x) and Ampere (sm_8x).  One table serves every generation: an opcode
 * means the same thing wherever it exists, and what differs between
 * generations (how fast a unit is) lives in the GPU description's unit
 * lines.  The classes are nvprof's inst_* counters; vecadd's profile checks
 * them (MOV, S2R and NOP are misc, XMAD and ISETP integer, EXIT control:
 * doc/simt.md).  Sorted by name: the GPU parser merges it with op lines.
 */
#define FP16 MPXKIT_SIMT_FP_16
#define FP32 MPXKIT_SIMT_FP_32
#define FP64 MPXKIT_SIMT_FP_64
#define INT  MPXKIT_SIMT_INTEGER
#define CONV MPXKIT_SIMT_BIT_CONVERT
#define CTRL MPXKIT_SIMT_CONTROL
#define LDST MPXKIT_SIMT_COMPUTE_LD_ST
#define MISC MPXKIT_SIMT_MISC
#define COMM MPXKIT_SIMT_INTER_THREAD_COMMUNICATION

#define NONE  MPXKIT_SIMT_KIND_NONE, MPXKIT_SIMT_GLOBAL
#define LD(s) MPXKIT_SIMT_KIND_LOAD, MPXKIT_SIMT_##s
#define ST(s) MPXKIT_SIMT_KIND_STORE, MPXKIT_SIMT_##s
#define AT(s) MPXKIT_SIMT_KIND_ATOMIC, MPXKIT_SIMT_##s
#define BARR  MPXKIT_SIMT_KIND_BARRIER, MPXKIT_SIMT_GLOBAL

/* One entry a line, so a diff shows which opcode changed. */
/* clang-format off */
const simt_builtin_op mpxkit__simt_builtin_ops[] = {
	{"ARRIVES", "ldst", MISC, NONE},
	{"ATOM", "ldst", LDST, AT(GENERIC)},
	{"ATOMG", "ldst", LDST, AT(GLOBAL)},
	{"ATOMS", "ldst", LDST, AT(SHARED)},
	{"B2R", "sync", MISC, NONE},
	{"BAR", "sync", MISC, BARR},
	{"BFE", "int", INT, NONE},
	{"BFI", "int", INT, NONE},
	{"BMMA", "tensor", INT, NONE},
	{"BMOV", "branch", CTRL, NONE},
	{"BMSK", "int", INT, NONE},
	{"BPT", "branch", CTRL, NONE},
	{"BRA", "branch", CTRL, NONE},
	{"BREAK", "branch", CTRL, NONE},
	{"BREV", "int", INT, NONE},
	{"BRK", "branch", CTRL, NONE},
	{"BRX", "branch", CTRL, NONE},
	{"BRXU", "branch", CTRL, NONE},
	{"BSSY", "branch", CTRL, NONE},
	{"BSYNC", "branch", CTRL, NONE},
	{"CAL", "branch", CTRL, NONE},
	{"CALL", "branch", CTRL, NONE},
	{"CCTL", "ldst", MISC, NONE},
	{"CCTLL", "ldst", MISC, NONE},
	{"CCTLT", "ldst", MISC, NONE},
	{"CONT", "branch", CTRL, NONE},
	{"CS2R", "sreg", MISC, NONE},
	{"CSET", "int", MISC, NONE},
	{"CSETP", "int", MISC, NONE},
	{"DADD", "fp64", FP64, NONE},
	{"DEPBAR", "sync", MISC, NONE},
	{"DFMA", "fp64", FP64, NONE},
	{"DMMA", "tensor", FP64, NONE},
	{"DMNMX", "fp64", FP64, NONE},
	{"DMUL", "fp64", FP64, NONE},
	{"DSET", "fp64", FP64, NONE},
	{"DSETP", "fp64", FP64, NONE},
	{"ERRBAR", "sync", MISC, NONE},
	{"EXIT", "branch", CTRL, NONE},
	{"F2F", "conv", CONV, NONE},
	{"F2FP", "conv", CONV, NONE},
	{"F2I", "conv", CONV, NONE},
	{"F2IP", "conv", CONV, NONE},
	{"FADD", "fp32", FP32, NONE},
	{"FADD32I", "fp32", FP32, NONE},
	{"FCHK", "fp32", FP32, NONE},
	{"FCMP", "fp32", FP32, NONE},
	{"FFMA", "fp32", FP32, NONE},
	{"FFMA32I", "fp32", FP32, NONE},
	{"FLO", "int", INT, NONE},
	{"FMNMX", "fp32", FP32, NONE},
	{"FMUL", "fp32", FP32, NONE},
	{"FMUL32I", "fp32", FP32, NONE},
	{"FRND", "conv", CONV, NONE},
	{"FSEL", "fp32", FP32, NONE},
	{"FSET", "fp32", FP32, NONE},
	{"FSETP", "fp32", FP32, NONE},
	{"FSWZADD", "fp32", FP32, NONE},
	{"GETLMEMBASE", "int", MISC, NONE},
	{"HADD2", "fp16", FP16, NONE},
	{"HADD2_32I", "fp16", FP16, NONE},
	{"HFMA2", "fp16", FP16, NONE},
	{"HFMA2_32I", "fp16", FP16, NONE},
	{"HMMA", "tensor", FP16, NONE},
	{"HMNMX2", "fp16", FP16, NONE},
	{"HMUL2", "fp16", FP16, NONE},
	{"HMUL2_32I", "fp16", FP16, NONE},
	{"HSET2", "fp16", FP16, NONE},
	{"HSETP2", "fp16", FP16, NONE},
	{"I2F", "conv", CONV, NONE},
	{"I2FP", "conv", CONV, NONE},
	{"I2I", "conv", CONV, NONE},
	{"I2IP", "conv", CONV, NONE},
	{"IABS", "int", INT, NONE},
	{"IADD", "int", INT, NONE},
	{"IADD3", "int", INT, NONE},
	{"IADD32I", "int", INT, NONE},
	{"ICMP", "int", INT, NONE},
	{"IDP", "int", INT, NONE},
	{"IDP4A", "int", INT, NONE},
	{"IMAD", "int", INT, NONE},
	{"IMADSP", "int", INT, NONE},
	{"IMMA", "tensor", INT, NONE},
	{"IMNMX", "int", INT, NONE},
	{"IMUL", "int", INT, NONE},
	{"IMUL32I", "int", INT, NONE},
	{"ISCADD", "int", INT, NONE},
	{"ISCADD32I", "int", INT, NONE},
	{"ISET", "int", INT, NONE},
	{"ISETP", "int", INT, NONE},
	{"JCAL", "branch", CTRL, NONE},
	{"JMP", "branch", CTRL, NONE},
	{"JMX", "branch", CTRL, NONE},
	{"JMXU", "branch", CTRL, NONE},
	{"KILL", "branch", CTRL, NONE},
	{"LD", "ldst", LDST, LD(GENERIC)},
	{"LDC", "const", LDST, NONE},
	{"LDG", "ldst", LDST, LD(GLOBAL)},
	{"LDGDEPBAR", "sync", MISC, NONE},
	{"LDGSTS", "ldst", LDST, LD(GLOBAL)},
	{"LDL", "ldst", LDST, LD(LOCAL)},
	{"LDS", "ldst", LDST, LD(SHARED)},
	{"LDSM", "ldst", LDST, LD(SHARED)},
	{"LEA", "int", INT, NONE},
	{"LEPC", "int", MISC, NONE},
	{"LOP", "int", INT, NONE},
	{"LOP3", "int", INT, NONE},
	{"LOP32I", "int", INT, NONE},
	{"MATCH", "ldst", COMM, NONE},
	{"MEMBAR", "sync", MISC, NONE},
	{"MOV", "int", MISC, NONE},
	{"MOV32I", "int", MISC, NONE},
	{"MUFU", "sfu", FP32, NONE},
	{"NANOSLEEP", "branch", CTRL, NONE},
	{"NOP", "int", MISC, NONE},
	{"P2R", "int", MISC, NONE},
	{"PBK", "branch", CTRL, NONE},
	{"PCNT", "branch", CTRL, NONE},
	{"PEXIT", "branch", CTRL, NONE},
	{"PLOP3", "int", MISC, NONE},
	{"PMTRIG", "int", MISC, NONE},
	{"POPC", "int", INT, NONE},
	{"PRET", "branch", CTRL, NONE},
	{"PRMT", "int", MISC, NONE},
	{"PSET", "int", MISC, NONE},
	{"PSETP", "int", MISC, NONE},
	{"QSPC", "ldst", MISC, NONE},
	{"R2B", "sync", MISC, NONE},
	{"R2P", "int", MISC, NONE},
	{"R2UR", "int", MISC, NONE},
	{"RED", "ldst", LDST, AT(GLOBAL)},
	{"REDUX", "int", COMM, NONE},
	{"RET", "branch", CTRL, NONE},
	{"RPCMOV", "branch", CTRL, NONE},
	{"RRO", "fp32", FP32, NONE},
	{"RTT", "branch", CTRL, NONE},
	{"S2R", "sreg", MISC, NONE},
	{"S2UR", "sreg", MISC, NONE},
	{"SEL", "int", MISC, NONE},
	{"SETCTAID", "int", MISC, NONE},
	{"SETLMEMBASE", "int", MISC, NONE},
	{"SGXT", "int", INT, NONE},
	{"SHF", "int", INT, NONE},
	{"SHFL", "ldst", COMM, NONE},
	{"SHL", "int", INT, NONE},
	{"SHR", "int", INT, NONE},
	{"SSY", "branch", CTRL, NONE},
	{"ST", "ldst", LDST, ST(GENERIC)},
	{"STG", "ldst", LDST, ST(GLOBAL)},
	{"STL", "ldst", LDST, ST(LOCAL)},
	{"STS", "ldst", LDST, ST(SHARED)},
	{"SUATOM", "ldst", LDST, AT(GLOBAL)},
	{"SULD", "ldst", LDST, LD(GLOBAL)},
	{"SURED", "ldst", LDST, AT(GLOBAL)},
	{"SUST", "ldst", LDST, ST(GLOBAL)},
	{"SYNC", "branch", CTRL, NONE},
	{"TEX", "tex", LDST, NONE},
	{"TEXS", "tex", LDST, NONE},
	{"TLD", "tex", LDST, NONE},
	{"TLD4", "tex", LDST, NONE},
	{"TLD4S", "tex", LDST, NONE},
	{"TLDS", "tex", LDST, NONE},
	{"TMML", "tex", LDST, NONE},
	{"TXD", "tex", LDST, NONE},
	{"TXQ", "tex", LDST, NONE},
	{"UBMSK", "int", INT, NONE},
	{"UBREV", "int", INT, NONE},
	{"UFLO", "int", INT, NONE},
	{"UIADD3", "int", INT, NONE},
	{"UIMAD", "int", INT, NONE},
	{"UISETP", "int", INT, NONE},
	{"ULDC", "const", LDST, NONE},
	{"ULEA", "int", INT, NONE},
	{"ULOP", "int", INT, NONE},
	{"ULOP3", "int", INT, NONE},
	{"UMOV", "int", MISC, NONE},
	{"UP2UR", "int", MISC, NONE},
	{"UPLOP3", "int", MISC, NONE},
	{"UPOPC", "int", INT, NONE},
	{"UPRMT", "int", MISC, NONE},
	{"UPSETP", "int", MISC, NONE},
	{"UR2UP", "int", MISC, NONE},
	{"USEL", "int", MISC, NONE},
	{"USGXT", "int", INT, NONE},
	{"USHF", "int", INT, NONE},
	{"VABSDIFF", "int", INT, NONE},
	{"VABSDIFF4", "int", INT, NONE},
	{"VADD", "int", INT, NONE},
	{"VMAD", "int", INT, NONE},
	{"VMNMX", "int", INT, NONE},
	{"VOTE", "int", COMM, NONE},
	{"VOTEU", "int", COMM, NONE},
	{"VSET", "int", INT, NONE},
	{"VSETP", "int", INT, NONE},
	{"VSHL", "int", INT, NONE},
	{"VSHR", "int", INT, NONE},
	{"WARPSYNC", "branch", CTRL, NONE},
	{"XMAD", "int", INT, NONE},
	{"YIELD", "branch", CTRL, NONE},
};
/* clang-format on */

const size_t mpxkit__simt_n_builtin_ops =
    sizeof mpxkit__simt_builtin_ops / sizeof mpxkit__simt_builtin_ops[0];

const char *const mpxkit__simt_builtin_units[] = {
    "int",    "fp16", "fp32",  "fp64", "sfu",  "conv", "tensor",
    "branch", "ldst", "const", "tex",  "sreg", "sync",
};

const size_t mpxkit__simt_n_builtin_units =
    sizeof mpxkit__simt_builtin_units / sizeof mpxkit__simt_builtin_units[0];

#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
const uint8_t mpxkit__simt_bits8[256] = {B6(0), B6(1), B6(1), B6(2)};
#undef B6
#undef B4
#undef B2
