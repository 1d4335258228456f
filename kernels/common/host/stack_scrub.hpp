#pragma once
// The stack an implementation runs on is wiped before every call, down to the lowest address the stack may ever
// reach, so no call can find what an earlier call (or the harness) left below the caller's frame: a memo table in a
// large frame, however deep, does not survive into the next call.

namespace evoteam_harness {

// Once, at start-up: finds the top of the main thread's stack and fixes how far it may grow (RLIMIT_STACK, at most
// 64 MiB). Returns false when the stack cannot be found; scrub_stack() then wipes only its first part.
bool prepare_stack_scrub();

// Wipes the stack below the caller's frame. Call it from the frame that then calls the implementation, so the
// implementation's frames start where the wiped part does.
void scrub_stack();

}  // namespace evoteam_harness
