// The files a run reads, kept by device and inode, so that no output replaces one of them:
// `attn explain --model DIR --html DIR/model.safetensors` would otherwise write the page over
// the checkpoint it read (through a Hub-cache snapshot, over the blob its link leads to).
// Every reader notes the file it opened (the model file, a checkpoint's files, its
// tokenizer's, the cache's refs/main, the training data); OutputFile (io) asks before it
// opens its file and again before it renames it into place, so that no reader or output
// added later can forget the check.
#ifndef ATTN_CORE_READ_FILES_H_
#define ATTN_CORE_READ_FILES_H_

#include <optional>
#include <string>

namespace attn {

// Notes the file open on `fd` (fstat: the file itself, whatever links led to it), under
// the name it was read by. Only regular files are noted: a device or a pipe (/dev/null,
// standard input from a terminal) is never replaced by an output.
void note_read_file(int fd, const std::string& name);
// The same for a file read by name (stat follows links).
void note_read_file(const std::string& path);

// The name a file was read by, when `path` (after its links) is a regular file this run read.
std::optional<std::string> read_file_named(const std::string& path);

// Forgets every file (the tests, which run many commands in one process).
void forget_read_files();

}  // namespace attn

#endif  // ATTN_CORE_READ_FILES_H_
