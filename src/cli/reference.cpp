#include "reference.h"

#include <iostream>

#include "attn/walkthrough.h"
#include "model/examples.h"
#include "validators.h"

namespace attn::cli {

namespace {

// "TEXT:{auto,always,never}" -> auto, always, never
std::vector<std::string> listed_choices(const std::string& type) {
  const std::size_t open = type.find('{'), close = type.find('}', open);
  std::vector<std::string> choices;
  if (open == std::string::npos || close == std::string::npos) return choices;
  const std::string list = type.substr(open + 1, close - open - 1);
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    choices.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return choices;
}

bool has_validator(CLI::Option& option, const std::string& name) {
  try {
    option.get_validator(name);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// The values a ValueList names, and what they are: the bundled examples, the step kinds.
std::vector<std::string> value_list(CLI::Option& option, std::string& what) {
  std::vector<std::string> values;
  if (has_validator(option, value_list_name(ValueList::Examples))) {
    what = "The bundled examples ('attn examples')";
    for (const auto& example : bundled_examples()) {
      values.push_back(example.name);
      if (!example_short_name(example).empty()) values.push_back(example_short_name(example));
    }
  }
  if (has_validator(option, value_list_name(ValueList::StepKinds))) {
    what = "Step kinds ('attn steps --kinds')";
    for (const auto& kind : step_kinds()) values.push_back(kind.name);
  }
  return values;
}

OptionReference describe_option(CLI::Option& option) {
  OptionReference o;
  o.positional = option.get_positional() && !option.nonpositional();
  if (o.positional) {
    o.names.push_back(option.get_name(true));
  } else {
    for (const auto& s : option.get_snames()) o.names.push_back("-" + s);
    for (const auto& l : option.get_lnames()) o.names.push_back("--" + l);
  }
  o.takes_value = option.get_expected_max() > 0;  // flags expect no value
  o.repeats = o.positional && option.get_items_expected_max() > 1;
  o.required = option.get_required();
  o.type = o.takes_value ? option.get_type_name() : "";
  o.default_value = option.get_default_str();
  o.description = option.get_description();
  o.choices = listed_choices(o.type);
  o.choices_are = "One of";
  if (o.choices.empty()) o.choices = value_list(option, o.choices_are);
  for (const CLI::Option* other : option.get_excludes()) o.excludes.push_back(other->get_name());
  const bool numeric = o.type.rfind("INT", 0) == 0 || o.type.rfind("UINT", 0) == 0 || o.type.rfind("FLOAT", 0) == 0;
  const bool free_text = has_validator(option, value_list_name(ValueList::FreeText));
  o.completion = !o.choices.empty() ? "choices" : numeric || free_text || !o.takes_value ? "none" : "files";
  return o;
}

CommandReference describe_command(CLI::App& app, const std::string& name) {
  CommandReference command;
  command.name = name;
  command.description = app.get_description();
  // Positionals first, then the options, each in the order they were added, as --help.
  for (const bool positionals : {true, false})
    for (CLI::Option* option : app.get_options()) {
      if (option->get_group().empty()) continue;  // hidden
      const bool positional = option->get_positional() && !option->nonpositional();
      if (positional == positionals) command.options.push_back(describe_option(*option));
    }
  return command;
}

}  // namespace

ProgramReference describe_program(CLI::App& app, const std::string& name, const std::string& version) {
  ProgramReference program;
  program.name = name;
  program.version = version;
  program.program = describe_command(app, "");
  for (CLI::App* sub : app.get_subcommands([](CLI::App* a) { return !a->get_group().empty(); }))
    program.commands.push_back(describe_command(*sub, sub->get_name()));
  return program;
}

std::optional<int> write_reference_if_asked(CLI::App& app, const std::string& version, int argc, char** argv) {
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (first != "--man-page" && first != "--completion") return std::nullopt;
  const ProgramReference program = describe_program(app, "attn", version);
  const std::string shell = argc > 2 ? argv[2] : "";
  if (first == "--man-page" && argc == 2) {
    write_man_page(program, std::cout);
  } else if (first == "--completion" && argc == 3 && shell == "bash") {
    write_bash_completion(program, std::cout);
  } else if (first == "--completion" && argc == 3 && shell == "zsh") {
    write_zsh_completion(program, std::cout);
  } else {
    std::cerr << "attn: expected 'attn --man-page' or 'attn --completion bash|zsh'\n";
    return 2;
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace attn::cli
