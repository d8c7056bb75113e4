// Whether two names on the command line lead to one file, so that a command never writes
// two outputs into one file, or its output over its own input.
#ifndef ATTN_CORE_SAME_FILE_H_
#define ATTN_CORE_SAME_FILE_H_

#include <string>

namespace attn {

// Strings are not enough: "a.json", "./a.json", "dir/../a.json", a symbolic or a hard link
// all name one file. Two existing files are the same when they have the same device and
// inode; a name that does not exist yet is compared by its resolved path (its folder's
// realpath and its last name). "-" (standard input or output) is only the same as "-".
bool same_file(const std::string& a, const std::string& b);

}  // namespace attn

#endif  // ATTN_CORE_SAME_FILE_H_
