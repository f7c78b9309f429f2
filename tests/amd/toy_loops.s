; A hand-written kernel for tests/amd/test_amd_isa_counts.py: an outer loop
; with an inner self-loop and a call, counts worked out in the test.
	.text
	.globl	toy_kernel
	.p2align	8
	.type	toy_kernel,@function
toy_kernel:
	s_load_dwordx2 s[0:1], s[4:5], 0x0
	v_mov_b32_e32 v1, 0
	s_mov_b32 s2, 4
.LBB0_1:                                ; outer loop header
	v_add_u32_e32 v1, v1, v0
	s_mov_b32 s3, 10
.LBB0_2:                                ; inner loop header and latch
	v_mul_lo_u32 v2, v1, v0
	v_alignbit_b32 v1, v1, v1, 7
	v_xor_b32_e32 v1, v1, v2
	s_add_i32 s3, s3, -1
	s_cmp_lg_u32 s3, 0
	s_cbranch_scc1 .LBB0_2
; %bb.3:                                ; outer loop latch
	v_lshlrev_b64 v[4:5], 1, v[4:5]
	s_getpc_b64 s[6:7]
	s_add_u32 s6, s6, toy_helper@rel32@lo+4
	s_addc_u32 s7, s7, toy_helper@rel32@hi+12
	s_swappc_b64 s[30:31], s[6:7]
	s_add_i32 s2, s2, -1
	s_cmp_lg_u32 s2, 0
	s_cbranch_scc1 .LBB0_1
; %bb.4:
	global_store_dword v0, v1, s[0:1]
	s_endpgm
.Lfunc_end0:
	.size	toy_kernel, .Lfunc_end0-toy_kernel
                                        ; NumVgprs: 6
                                        ; ScratchSize: 0
                                        ; Occupancy: 16
	.p2align	2
	.type	toy_helper,@function
toy_helper:
	v_rcp_f32_e32 v3, v3
	v_add_f64 v[4:5], v[4:5], v[4:5]
	s_setpc_b64 s[30:31]
.Lfunc_end1:
	.size	toy_helper, .Lfunc_end1-toy_helper
