; A hand-written kernel in gfx12 syntax for tests/amd/test_amd_isa_counts.py:
; 8 iterations unrolled into 4 trips of 2 (the trip count is read from the
; induction variable s4), a call through s_add_co_u32 and 64-bit
; multiply-adds spelt v_mad_co_u64_u32.
	.text
	.globl	toy_unrolled
	.p2align	8
	.type	toy_unrolled,@function
toy_unrolled:
	s_mov_b32 s4, 8
	v_mov_b32_e32 v1, 0
.LBB0_1:                                ; two iterations a trip
	v_mad_co_u64_u32 v[2:3], null, v1, v0, 0
	v_add_nc_u32_e32 v1, v1, v2
	v_mad_co_u64_u32 v[2:3], null, v1, v0, 0
	v_add_nc_u32_e32 v1, v1, v2
	s_add_co_i32 s4, s4, -2
	s_cmp_lg_u32 s4, 0
	s_cbranch_scc1 .LBB0_1
; %bb.2:
	s_getpc_b64 s[6:7]
	s_sext_i32_i16 s7, s7
	s_add_co_u32 s6, s6, toy_helper12@rel32@lo+8
	s_add_co_ci_u32 s7, s7, toy_helper12@rel32@hi+16
	s_swappc_b64 s[30:31], s[6:7]
	s_endpgm
.Lfunc_end0:
	.size	toy_unrolled, .Lfunc_end0-toy_unrolled
	.p2align	2
	.type	toy_helper12,@function
toy_helper12:
	v_mul_lo_u32 v3, v3, v3
	s_setpc_b64 s[30:31]
.Lfunc_end1:
	.size	toy_helper12, .Lfunc_end1-toy_helper12
