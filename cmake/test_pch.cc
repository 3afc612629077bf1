// The translation unit that builds the test code's precompiled header (bulwark_add_test_pch in
// cmake/BulwarkHelpers.cmake); it has no code of its own.
