// The message of the error a piece of code throws, for tests that compare whole messages.
#ifndef ATTN_TESTS_ERROR_MESSAGE_H_
#define ATTN_TESTS_ERROR_MESSAGE_H_

#include <string>

#include "attn/error.h"

namespace attn_test {

// The what() of the `Error` that `f` throws, or "" when it throws nothing.
template <typename Error, typename F>
std::string error_message_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <typename F>
std::string input_error_of(F f) {
  return error_message_of<attn::InputError>(f);
}

template <typename F>
std::string numeric_error_of(F f) {
  return error_message_of<attn::NumericError>(f);
}

template <typename F>
std::string environment_error_of(F f) {
  return error_message_of<attn::EnvironmentError>(f);
}

}  // namespace attn_test

#endif  // ATTN_TESTS_ERROR_MESSAGE_H_
