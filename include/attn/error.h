// Errors the library throws. main() turns them into one line on stderr and an exit code.
#ifndef ATTN_ERROR_H_
#define ATTN_ERROR_H_

#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

// `text` as one line a terminal shows as it is: control characters written as JSON escapes
// (\n, \t, \u001b, \u009b), the marks that reorder text (U+202E) likewise, and bytes that
// are not UTF-8 as \xff. Every message quoting the user's keys, strings or options
// passes through it.
std::string printable(const std::string& text);

// Bad input: a model file, a token, an option value. Carries where the problem is
// (the file and the JSON path inside it) so the message can name both:
//   model.json: encoder[0].attention.W_q: expected shape [4, 4] (d_model x H*d_head), got [4, 3]
// what() is always one line: control characters from the file are escaped (printable()).
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string json_path, std::string message);

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string json_path_;
  std::string message_;
};

// Several input errors found in one pass (attn validate reports them all).
class InputErrors : public std::runtime_error {
 public:
  explicit InputErrors(std::vector<InputError> errors);
  const std::vector<InputError>& errors() const { return errors_; }

 private:
  std::vector<InputError> errors_;
};

// A broken promise inside attn: a step given shapes it cannot take, a printer given an
// index outside its tensor. Never the user's fault (their mistakes are InputErrors, found
// before anything runs): main reports it as "internal error" with exit code 1. The one type
// of internal exception, so that a catch for it cannot miss one.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The machine refused something attn needs: writing its output (a closed or full standard
// output), a thread, memory. Not the input's fault: main prints what() as it is, one whole
// line ("attn: cannot write to standard output: ..." or "PATH: cannot write the dump:
// ..."), with exit code 1.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A computed value is not finite (overflow, 0/0): names the tensor and the position.
class NumericError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training stopped at a loss, gradient or weight that is no longer a number: the message
// names the step and the tensor and says what helps; nothing was written. Its own type, so
// that what adds hints to a NumericError knows this one has its own.
class TrainingStopped : public NumericError {
 public:
  using NumericError::NumericError;
};

}  // namespace attn

#endif  // ATTN_ERROR_H_
