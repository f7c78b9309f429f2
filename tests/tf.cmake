# Trial factoring's files (core/tf): the worktodo file and checkpoints,
# without a device. The device side is
# tests/test_tf.c, the lode tf command tests/test_tf.py.
lode_test_program(test_tf_files)
target_sources(test_tf_files PRIVATE tf_test_files.c)
target_link_libraries(test_tf_files PRIVATE lode_tf)
add_test(NAME tf_files COMMAND test_tf_files)
set_tests_properties(tf_files PROPERTIES TIMEOUT 120)
# The result lines and the class driver's finishing steps (core/tf).
lode_test_program(test_tf_results)
target_sources(test_tf_results PRIVATE tf_test_files.c)
target_link_libraries(test_tf_results PRIVATE lode_tf)
add_test(NAME tf_results COMMAND test_tf_results)
set_tests_properties(tf_results PROPERTIES TIMEOUT 120)
# Stages and partial ranges (issue 40): a worktodo line raised past a
# stage, the partial result's checkpoint and lines, a stage's finish.
lode_test_program(test_tf_stages)
target_sources(test_tf_stages PRIVATE tf_test_files.c)
target_link_libraries(test_tf_stages PRIVATE lode_tf)
add_test(NAME tf_stages COMMAND test_tf_stages)
set_tests_properties(tf_stages PROPERTIES TIMEOUT 120)
# Verifiable trial factoring (docs/TF-PROOF.md): the condition, the
# primality test, the proof library and its verifier against values
# computed in Python; test_tf_proof.py builds proof files entirely in Python
# (its own pow, Miller-Rabin, li and hashlib) and checks that
# `lode tf --verify` (and test_tf_proof --verify, the library alone)
# accepts them and rejects damaged or forged ones.
lode_test_program(test_tf_proof)
target_link_libraries(test_tf_proof PRIVATE lode_tf)
add_test(NAME tf_proof COMMAND test_tf_proof)
set_tests_properties(tf_proof PROPERTIES TIMEOUT 300)
add_test(NAME tf_proof_cli COMMAND Python3::Interpreter "${CMAKE_CURRENT_SOURCE_DIR}/test_tf_proof.py"
         $<TARGET_FILE:lode> $<TARGET_FILE:test_tf_proof>)
set_tests_properties(tf_proof_cli PROPERTIES TIMEOUT 300)
# The PrimeNet v5 stand-in server (tests/primenet_standin.py, the oracle of
# lode's PrimeNet client) against the protocol: mfaktc's checksum vectors,
# hand-built requests of every transaction, each kind of malformed request
# refused and recorded, injected errors, hostile replies, down and up.
add_test(NAME primenet_standin COMMAND Python3::Interpreter "${CMAKE_CURRENT_SOURCE_DIR}/test_primenet_standin.py")
set_tests_properties(primenet_standin PROPERTIES TIMEOUT 60)
