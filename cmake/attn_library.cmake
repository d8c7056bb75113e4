# attn_library(NAME SOURCES ... [PUBLIC_HEADERS ...] [USES lib ...])
#
# One folder of src/ = one static library, attn_NAME, with one job (docs/architecture.md).
# The build holds the layers apart, so that a wrong include fails to compile:
#   - src/NAME/'s own headers are included as "NAME/x.h", and only by NAME itself and by
#     the libraries that name NAME in USES (not by the libraries above those);
#   - the public headers NAME owns, include/attn/<h>, are included as "attn/<h>" by NAME,
#     by its users and by theirs (a public header may include the public headers below it).
# Each library gets its own include roots in the build tree, holding links to just what
# it may see.
function(attn_library name)
  cmake_parse_arguments(LIB "" "" "SOURCES;PUBLIC_HEADERS;USES" ${ARGN})
  set(private_root ${PROJECT_BINARY_DIR}/include-roots/${name})
  set(public_root ${PROJECT_BINARY_DIR}/include-roots/${name}-public)
  file(MAKE_DIRECTORY ${private_root} ${public_root}/attn)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${name} ${private_root}/${name} SYMBOLIC)
  foreach(header IN LISTS LIB_PUBLIC_HEADERS)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/attn/${header} ${public_root}/attn/${header} SYMBOLIC)
  endforeach()

  add_library(attn_${name}_public INTERFACE)
  target_include_directories(attn_${name}_public INTERFACE ${public_root})
  add_library(attn_${name} STATIC ${LIB_SOURCES})
  target_include_directories(attn_${name} INTERFACE ${private_root})
  target_include_directories(attn_${name} PRIVATE ${private_root})
  target_link_libraries(attn_${name} PUBLIC attn_${name}_public)
  foreach(used IN LISTS LIB_USES)
    target_link_libraries(attn_${name} PRIVATE attn_${used})
    target_link_libraries(attn_${name}_public INTERFACE attn_${used}_public)
  endforeach()
  target_compile_options(attn_${name} PRIVATE ${ATTN_WARNING_FLAGS} ${ATTN_STRICT_FP_FLAGS})
  if(ATTN_FUZZ AND name IN_LIST ATTN_FUZZ_COVERED)
    target_compile_options(attn_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  target_compile_options(attn_${name} PUBLIC ${ATTN_SPEED_FLAGS})
endfunction()
