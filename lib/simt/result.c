/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel's result: its parts, bounds and counters under the profiler's names. */
#include <stdlib.h>

#include "mpxkit/simt.h"

static const char *const part_names[MPXKIT_SIMT_N_PARTS] = {
    "alu",	   "memory",	 "nop",	       "stall_memory", "stall_alu",
    "stall_fetch", "stall_sync", "stall_pipe", "launch",
};

static const char *const bound_names[MPXKIT_SIMT_N_BOUNDS] = {
    "latency", "issue", "unit", "l1", "shared", "l2", "dram",
};

const char *mpxkit_simt_part_name(int part)
{
	return part >= 0 && part < MPXKIT_SIMT_N_PARTS ? part_names[part] : "unknown";
}

const char *mpxkit_simt_bound_name(int bound)
{
	return bound >= 0 && bound < MPXKIT_SIMT_N_BOUNDS ? bound_names[bound] : "unknown";
}

void mpxkit_simt_result_free(mpxkit_simt_result *r)
{
	if (r == NULL)
		return;
	free(r->kernel);
	free(r->pcs);
	free(r);
}

size_t mpxkit_simt_counters(const mpxkit_simt_result *r, mpxkit_simt_counter *out, size_t max)
{
	const mpxkit_simt_counter all[] = {
	    {"inst_executed", (double)r->warp_insts},
	    {"thread_inst_executed", (double)r->thread_insts},
	    {"inst_fp_16", (double)r->thread_class[MPXKIT_SIMT_FP_16]},
	    {"inst_fp_32", (double)r->thread_class[MPXKIT_SIMT_FP_32]},
	    {"inst_fp_64", (double)r->thread_class[MPXKIT_SIMT_FP_64]},
	    {"inst_integer", (double)r->thread_class[MPXKIT_SIMT_INTEGER]},
	    {"inst_bit_convert", (double)r->thread_class[MPXKIT_SIMT_BIT_CONVERT]},
	    {"inst_control", (double)r->thread_class[MPXKIT_SIMT_CONTROL]},
	    {"inst_compute_ld_st", (double)r->thread_class[MPXKIT_SIMT_COMPUTE_LD_ST]},
	    {"inst_misc", (double)r->thread_class[MPXKIT_SIMT_MISC]},
	    {"inst_inter_thread_communication",
	     (double)r->thread_class[MPXKIT_SIMT_INTER_THREAD_COMMUNICATION]},
	    {"inst_executed_global_loads", (double)r->inst_global_loads},
	    {"inst_executed_global_stores", (double)r->inst_global_stores},
	    {"inst_executed_local_loads", (double)r->inst_local_loads},
	    {"inst_executed_local_stores", (double)r->inst_local_stores},
	    {"inst_executed_shared_loads", (double)r->inst_shared_loads},
	    {"inst_executed_shared_stores", (double)r->inst_shared_stores},
	    {"inst_executed_global_atomics", (double)r->inst_global_atomics},
	    {"inst_executed_shared_atomics", (double)r->inst_shared_atomics},
	    {"gld_transactions", (double)r->gld_transactions},
	    {"gst_transactions", (double)r->gst_transactions},
	    {"local_load_transactions", (double)r->local_load_transactions},
	    {"local_store_transactions", (double)r->local_store_transactions},
	    {"shared_load_transactions", (double)r->shared_load_transactions},
	    {"shared_store_transactions", (double)r->shared_store_transactions},
	    {"l2_tex_read_transactions", (double)r->l2_read_transactions},
	    {"l2_tex_write_transactions", (double)r->l2_write_transactions},
	    {"dram_read_transactions", (double)r->dram_read_transactions},
	    {"dram_write_transactions", (double)r->dram_write_transactions},
	    {"global_hit_rate",
	     r->gld_l1_sectors ? 100.0 * (double)r->gld_l1_hits / (double)r->gld_l1_sectors : 0},
	    {"warp_nonpred_execution_efficiency",
	     r->warp_insts ? 100.0 * (double)r->thread_insts / (32.0 * (double)r->warp_insts) : 0},
	};
	size_t n = sizeof all / sizeof all[0];

	for (size_t i = 0; i < n && i < max; i++)
		out[i] = all[i];
	return n;
}
