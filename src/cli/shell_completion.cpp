// The bash and zsh completion scripts, from the command line's own reference. Both complete
// the subcommands, each one's options, the values of options that list them (--color
// auto|always|never, --example with the bundled examples' names, --steps with the step
// kinds), and file names for other text values.
#include <map>

#include "reference.h"

namespace attn::cli {

namespace {

// A word for a shell, in single quotes: 'it'\''s'.
std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}
std::string words(const std::vector<std::string>& items) { return joined(items, " "); }

std::vector<std::string> option_names(const CommandReference& command) {
  std::vector<std::string> names;
  for (const auto& o : command.options)
    if (!o.positional) names.insert(names.end(), o.names.begin(), o.names.end());
  return names;
}

// The first line of a description, for a one-line list.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// --- bash ----------------------------------------------------------------------------------

// The `case $prev in ... esac` arms of one command: what follows an option that takes a value.
void write_bash_values(const CommandReference& command, std::ostream& out) {
  out << "      case $prev in\n";
  for (const auto& o : command.options) {
    if (o.positional || !o.takes_value) continue;
    out << "        " << joined(o.names, "|") << ") ";
    if (o.completion == "choices")
      out << "COMPREPLY=($(compgen -W " << single_quoted(words(o.choices)) << " -- \"$cur\")); ";
    else if (o.completion == "files")
      out << "_attn_files; ";
    out << "return ;;\n";
  }
  out << "      esac\n";
}

void write_bash_command(const CommandReference& command, std::ostream& out) {
  out << "    " << command.name << ")\n";
  write_bash_values(command, out);
  out << "      if [[ $cur == -* ]]; then\n"
      << "        COMPREPLY=($(compgen -W " << single_quoted(words(option_names(command))) << " -- \"$cur\"))\n";
  // A positional argument: file names (validate's files), or nothing to suggest (a sentence).
  bool files = false;
  for (const auto& o : command.options) files = files || (o.positional && o.completion == "files" && o.repeats);
  out << "      else\n        " << (files ? "_attn_files" : ":") << "\n      fi\n      ;;\n";
}

// --- zsh -----------------------------------------------------------------------------------

// Text inside an _arguments spec's brackets or after its colons.
std::string zsh_text(const std::string& text) {
  std::string out;
  for (const char c : first_line(text)) {
    if (c == '\\' || c == ':' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::string zsh_action(const OptionReference& o) {
  if (o.completion == "choices") return "(" + words(o.choices) + ")";
  if (o.completion == "files") return "_files";
  return " ";
}

// One _arguments spec: '(-c --config --example)'{-c,--config}'[Model file]:TEXT:_files'
std::string zsh_spec(const OptionReference& o, const std::map<std::string, std::vector<std::string>>& names_of) {
  if (o.positional) {  // '*:files:_files' (several), '::text: ' (optional), ':name: ' (required)
    const std::string kind = o.repeats ? "*:" : o.required ? ":" : "::";
    return single_quoted(kind + zsh_text(o.names[0]) + ":" + zsh_action(o));
  }
  std::vector<std::string> exclusions = o.names;
  for (const auto& e : o.excludes) {
    const auto it = names_of.find(e);
    if (it != names_of.end()) exclusions.insert(exclusions.end(), it->second.begin(), it->second.end());
  }
  // {-c,--config}: the shell's brace expansion makes one spec of each name
  std::string spec = single_quoted("(" + words(exclusions) + ")");
  spec += o.names.size() == 1 ? o.names[0] : "{" + joined(o.names, ",") + "}";
  std::string rest = "[" + zsh_text(o.description) + "]";
  if (o.takes_value) rest += ":" + zsh_text(o.type.substr(0, o.type.find(':'))) + ":" + zsh_action(o);
  return spec + single_quoted(rest);
}

void write_zsh_command(const CommandReference& command, std::ostream& out) {
  std::map<std::string, std::vector<std::string>> names_of;  // "--example" -> -e --example
  for (const auto& o : command.options)
    for (const auto& n : o.names) names_of[n] = o.names;
  out << "        " << command.name << ")\n          _arguments -s -S";
  for (const auto& o : command.options) out << " \\\n            " << zsh_spec(o, names_of);
  out << "\n          ;;\n";
}

}  // namespace

void write_bash_completion(const ProgramReference& program, std::ostream& out) {
  std::vector<std::string> commands;
  for (const auto& c : program.commands) commands.push_back(c.name);
  out << "# bash completion for " << program.name << ", written by '" << program.name
      << " --completion bash' from its own command line: do not edit.\n"
      << "# Installed in share/bash-completion/completions/, or: source <(" << program.name << " --completion bash)\n\n"
      << "_attn_files() {\n  compopt -o filenames 2>/dev/null\n  COMPREPLY=($(compgen -f -- \"$cur\"))\n}\n\n"
      << "_attn() {\n  local cur=${COMP_WORDS[COMP_CWORD]} prev=\"\" command=\"\" i\n"
      << "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
      << "  # --color=al: bash splits the word at '=' (COMP_WORDBREAKS)\n"
      << "  if [[ $cur == = ]]; then\n    cur=\"\"\n"
      << "  elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then\n    prev=${COMP_WORDS[COMP_CWORD - 2]}\n  fi\n"
      << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      << "    case ${COMP_WORDS[i]} in\n      " << joined(commands, "|")
      << ") command=${COMP_WORDS[i]}; break ;;\n    esac\n  done\n"
      << "  COMPREPLY=()\n  case $command in\n    \"\")\n"
      << "      if [[ $cur == -* ]]; then\n"
      << "        COMPREPLY=($(compgen -W " << single_quoted(words(option_names(program.program))) << " -- \"$cur\"))\n"
      << "      else\n        COMPREPLY=($(compgen -W " << single_quoted(words(commands)) << " -- \"$cur\"))\n"
      << "      fi\n      ;;\n";
  for (const auto& command : program.commands) write_bash_command(command, out);
  out << "  esac\n}\n\ncomplete -F _attn " << program.name << "\n";
}

void write_zsh_completion(const ProgramReference& program, std::ostream& out) {
  out << "#compdef " << program.name << "\n# zsh completion for " << program.name << ", written by '" << program.name
      << " --completion zsh' from its own command line: do not edit.\n"
      << "# Installed as _attn in a folder of $fpath (share/zsh/site-functions).\n\n"
      << "_attn() {\n  local curcontext=$curcontext state state_descr line ret=1\n  typeset -A opt_args\n"
      << "  local -a commands\n  commands=(\n";
  for (const auto& c : program.commands)
    out << "    " << single_quoted(c.name + ":" + first_line(c.description)) << "\n";
  out << "  )\n  _arguments -C";
  for (const auto& o : program.program.options) {
    const std::string names = o.names.size() == 1 ? o.names[0] : "{" + joined(o.names, ",") + "}";
    out << " \\\n    '(- : *)'" << names << single_quoted("[" + zsh_text(o.description) + "]");
  }
  out << " \\\n    '1: :->command' \\\n    '*:: :->argument' && return 0\n"
      << "  case $state in\n    command)\n      _describe -t commands " << single_quoted(program.name + " subcommand")
      << " commands && ret=0\n      ;;\n    argument)\n      curcontext=${curcontext%:*:*}:" << program.name
      << "-$line[1]:\n      case $line[1] in\n";
  for (const auto& command : program.commands) write_zsh_command(command, out);
  out << "      esac\n      ret=$?\n      ;;\n  esac\n  return ret\n}\n\n_attn \"$@\"\n";
}

}  // namespace attn::cli
