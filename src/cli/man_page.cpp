// attn(1), in roff with the man(7) macros, from the command line's own reference.
#include <cctype>
#include <sstream>

#include "reference.h"

namespace attn::cli {

namespace {

// Text for roff: backslashes shown as such, and a line that starts with a dot or an
// apostrophe (a request) made plain text.
std::string roff(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\')
      out += "\\e";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// An option's name in bold, its dashes as minus signs: \fB\-\-config\fR.
std::string bold_name(const std::string& name) {
  std::string out = "\\fB";
  for (const char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out + "\\fR";
}

// A description of several lines (a list indented under its first line, as init's
// --preset) keeps its lines and their indentation, unfilled, as --help shows them.
void write_paragraph(const std::string& text, std::ostream& out) {
  const std::size_t newline = text.find('\n');
  out << roff(text.substr(0, newline)) << "\n";
  if (newline == std::string::npos) return;
  out << ".nf\n";
  std::istringstream rest(text.substr(newline + 1));
  for (std::string line; std::getline(rest, line);) out << roff(line) << "\n";
  out << ".fi\n";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

void write_option(const OptionReference& o, std::ostream& out) {
  out << ".TP\n";
  if (o.positional) {
    out << "\\fI" << roff(o.names[0]) << "\\fR" << (o.repeats ? " ..." : "");
  } else {
    std::vector<std::string> names;
    for (const auto& n : o.names) names.push_back(bold_name(n));
    out << joined(names, ", ");
  }
  if (o.takes_value && !o.positional) out << " \\fI" << roff(o.type) << "\\fR";
  out << "\n";
  write_paragraph(o.description, out);
  std::vector<std::string> notes;
  if (!o.choices.empty() && o.type.find('{') == std::string::npos)
    notes.push_back(o.choices_are + ": " + joined(o.choices, ", ") + ".");
  if (!o.default_value.empty()) notes.push_back("Default: " + o.default_value + ".");
  if (!o.excludes.empty()) notes.push_back("Not with " + joined(o.excludes, ", ") + ".");
  if (o.positional && o.repeats) notes.push_back("Several may be given.");
  if (o.required) notes.push_back("Required.");
  if (!notes.empty()) out << ".br\n" << roff(joined(notes, " ")) << "\n";
}

// "[OPTIONS] [text]", "[OPTIONS] files...": the usage line of a command, as --help's.
std::string usage(const CommandReference& command) {
  std::string line = "[\\fIOPTIONS\\fR]";
  for (const auto& o : command.options) {
    if (!o.positional) continue;
    const std::string name = "\\fI" + roff(o.names[0]) + "\\fR" + (o.repeats ? "..." : "");
    line += " " + (o.repeats ? name : "[" + name + "]");
  }
  return line;
}

void write_static_sections(std::ostream& out) {
  out << ".SH EXIT STATUS\n"
         ".TP\n0\nSuccess.\n"
         ".TP\n2\nBad usage or bad input: one line on standard error naming the file, the JSON path, what was "
         "expected and what was found.\n"
         ".TP\n1\nAnything else: the machine's fault (a full disk, no memory) or an internal error.\n";
  out << ".SH ENVIRONMENT\n"
         ".TP\n.B OMP_NUM_THREADS\nHow many threads run the large products, the softmax and the JSON dump "
         "(default: one per CPU attn may use). The results are the same bits whatever the number.\n"
         ".TP\n.B ATTN_CPU\nbaseline, avx2 or avx512: the build of the large matrix product to run (default: the "
         "best this CPU runs). Each gives the same bits every run; baseline differs from the others in the last bits. "
         "\\fBattn train\\fR always runs Eigen's product, so that trained files retrain byte for byte.\n"
         ".TP\n.B OMP_WAIT_POLICY\nLeft to the user when set; otherwise attn runs with PASSIVE "
         "(waiting threads sleep instead of spinning).\n"
         ".TP\n.B NO_COLOR\nWhen set and not empty, \\fB\\-\\-color auto\\fR uses no colour.\n"
         ".TP\n.BR TERM \", \" COLORTERM\nWhether the terminal takes colour (not with TERM=dumb), and how many: "
         "24-bit with COLORTERM=truecolor or 24bit, 256 when TERM contains 256color.\n"
         ".TP\n.B COLUMNS\nThe line width of printed arrays when standard output is not a terminal (default 75).\n";
  out << ".SH FILES\n.TP\n.I " << roff(ATTN_DOC_DIR) << "\nThe user guide: a tutorial, one page per step, "
      << "the model file, the trace names, the dump format (README.md is the index).\n";
  out << ".SH SEE ALSO\n\\fBpython3\\fR(1) with NumPy, to load the dumps (" << roff(ATTN_DOC_DIR)
      << "/dump-format.md).\n";
}

}  // namespace

void write_man_page(const ProgramReference& program, std::ostream& out) {
  std::string summary = program.program.description;  // "attn: see how ..."
  if (summary.rfind(program.name + ": ", 0) == 0) summary = summary.substr(program.name.size() + 2);
  std::string sentence = summary;
  if (!sentence.empty()) sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
  out << ".\\\" attn(1), written by '" << program.name << " --man-page' from its own command line: do not edit.\n";
  out << ".TH "
      << "ATTN 1 \"\" \"" << roff(program.name + " " + program.version) << "\" \"User Commands\"\n";
  out << ".SH NAME\n" << program.name << " \\- " << roff(summary) << "\n";
  out << ".SH SYNOPSIS\n";
  out << ".B " << program.name << "\n[\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR\n";
  for (const auto& command : program.commands)
    out << ".br\n.B " << program.name << " " << command.name << "\n" << usage(command) << "\n";
  out << ".SH DESCRIPTION\n" << roff(sentence) << ".\n.PP\n";
  std::vector<std::string> names;
  for (const auto& command : program.commands) names.push_back("\\fB" + command.name + "\\fR");
  out << "The subcommands are " << joined(names, ", ") << ", each described below with its options. \\fB"
      << program.name << " \\fISUBCOMMAND\\fB \\-\\-help\\fR prints the same list of options.\n";
  out << ".SH OPTIONS\n";
  for (const auto& o : program.program.options) write_option(o, out);
  out << ".SH SUBCOMMANDS\n";
  for (const auto& command : program.commands) {
    out << ".SS \"" << program.name << " " << command.name << "\"\n";
    write_paragraph(command.description, out);
    out << ".PP\nUsage: \\fB" << program.name << " " << command.name << "\\fR " << usage(command) << "\n";
    for (const auto& o : command.options) write_option(o, out);
  }
  write_static_sections(out);
}

}  // namespace attn::cli
