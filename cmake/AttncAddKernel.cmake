# attnc_add_kernel: compiles an attn spec with attnc at build time into a static library target,
# the way Halide's add_halide_library turns a generator into one. Installed next to
# AttncConfig.cmake, so `find_package(Attnc)` provides it; attnc's own build tree can include it
# too (set ATTNC_EXECUTABLE and ATTNC_RUNTIME_TARGET first, see below).
#
#   attnc_add_kernel(<name>
#                    SPEC <file>
#                    [TARGETS <target>...] [TARGET <target>]
#                    [OPTIONS <attnc-arg>...] [TUNING_DB <db>]
#                    [HEADER <out-var>] [OBJECT <out-var>])
#
#   <name>    The library target to create, and the base name of what attnc writes:
#             ${CMAKE_CURRENT_BINARY_DIR}/<name>.o and <name>.h. The library exports one C
#             function per `attn.kernel` in the spec (named after the kernel, not after <name>).
#   SPEC      The spec file; a relative path is relative to CMAKE_CURRENT_SOURCE_DIR.
#   TARGETS   attnc code-generation targets, best first: x86-64-avx512, x86-64-avx2, x86-64,
#             host, .... Several make one object with a variant per target whose entry points
#             pick the best variant the running CPU supports (attnc --target=a,b,c); the
#             environment variable ATTNC_TARGET forces one.
#   TARGET    Same as TARGETS with a single target. Without either, ATTNC_TARGET if set,
#             else `host` (the machine that runs the build, like Halide's `host`).
#   OPTIONS   Further arguments for attnc, verbatim (e.g. --schedule block_q=32,block_kv=128, or
#             --backend=halide).
#   TUNING_DB A tuning DB written by attnc-tune: each kernel's best schedule (and backend) for
#             the target is taken from it (`attnc --tuning-db`); OPTIONS given explicitly win.
#             The object is rebuilt when the DB changes, and is byte-identical for the same DB.
#   HEADER    Set <out-var> to the generated header's full path.
#   OBJECT    Set <out-var> to the generated object's full path.
#
# The target <name> is a STATIC library made from the generated object. Its interface adds the
# directory of <name>.h to the include path (so `#include "<name>.h"` works; the header includes
# <attnc/Runtime/attnc_runtime.h> and <dlpack/dlpack.h>) and links ATTNC_RUNTIME_TARGET and libm
# (the kernels call expf/logf). The object is rebuilt when the spec or the attnc executable
# changes. The runtime is C++; a C-only project works too (Attnc::runtime then adds libstdc++).
# Needs CMake >= 3.23 (header file sets).
#
# Variables read when the function is called:
#   ATTNC_EXECUTABLE      attnc: a path or the name of an executable target. The package config
#                         sets it to the location of Attnc::attnc unless it is already set.
#                         Inside attnc's own build, set it to `attnc` (the target).
#   ATTNC_RUNTIME_TARGET  The runtime library target; default Attnc::runtime. Inside attnc's
#                         own build, set it to `attnc_runtime`.
#   ATTNC_TARGET          The default code-generation target (see TARGET).

function(attnc_add_kernel NAME)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SPEC;TARGET;HEADER;OBJECT;TUNING_DB" "TARGETS;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "attnc_add_kernel(${NAME}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SPEC)
    message(FATAL_ERROR "attnc_add_kernel(${NAME}): SPEC <file> is required")
  endif()
  if(TARGET ${NAME})
    message(FATAL_ERROR "attnc_add_kernel(${NAME}): a target named ${NAME} already exists")
  endif()

  if(ATTNC_EXECUTABLE)
    set(attnc ${ATTNC_EXECUTABLE})
  elseif(TARGET Attnc::attnc)
    set(attnc Attnc::attnc)
  else()
    message(FATAL_ERROR "attnc_add_kernel(${NAME}): no attnc: set ATTNC_EXECUTABLE (a path or "
                        "an executable target) or call find_package(Attnc) first")
  endif()
  if(ATTNC_RUNTIME_TARGET)
    set(runtime ${ATTNC_RUNTIME_TARGET})
  else()
    set(runtime Attnc::runtime)
  endif()
  if(NOT TARGET ${runtime})
    message(FATAL_ERROR "attnc_add_kernel(${NAME}): the runtime target `${runtime}` does not "
                        "exist: call find_package(Attnc) first or set ATTNC_RUNTIME_TARGET")
  endif()

  # The code-generation targets, as one --target list (see TARGETS above).
  set(targets ${ARG_TARGETS} ${ARG_TARGET})
  if(NOT targets)
    if(ATTNC_TARGET)
      set(targets ${ATTNC_TARGET})
    else()
      set(targets host)
    endif()
  endif()
  list(JOIN targets "," target)

  cmake_path(ABSOLUTE_PATH ARG_SPEC BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE
             OUTPUT_VARIABLE spec)
  set(tuning)
  if(ARG_TUNING_DB)
    cmake_path(ABSOLUTE_PATH ARG_TUNING_DB BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE
               OUTPUT_VARIABLE tuning_db)
    set(tuning --tuning-db ${tuning_db})
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR})
  set(object ${dir}/${NAME}.o)
  set(header ${dir}/${NAME}.h)

  # A target name in COMMAND runs that target's file and adds a target-level dependency; in
  # DEPENDS it makes the object depend on the executable file. A plain path works in both.
  add_custom_command(
    OUTPUT ${object} ${header}
    COMMAND ${attnc} ${spec} --target ${target} ${tuning} ${ARG_OPTIONS} -o ${object}
    DEPENDS ${spec} ${attnc} ${tuning_db}
    COMMENT "attnc: compiling ${NAME} (${target}) from ${ARG_SPEC}"
    VERBATIM)
  set_source_files_properties(${object} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)

  add_library(${NAME} STATIC ${object})
  # The header as a PUBLIC header file set: its directory goes on the consumers' include path,
  # and they compile only after it has been generated.
  target_sources(${NAME} PUBLIC FILE_SET HEADERS BASE_DIRS ${dir} FILES ${header})
  target_link_libraries(${NAME} PUBLIC ${runtime} m)
  # The archive has no compiled sources to take a language from; use one that is enabled.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST languages)
    set_target_properties(${NAME} PROPERTIES LINKER_LANGUAGE C)
  else()
    set_target_properties(${NAME} PROPERTIES LINKER_LANGUAGE CXX)
  endif()

  if(ARG_HEADER)
    set(${ARG_HEADER} ${header} PARENT_SCOPE)
  endif()
  if(ARG_OBJECT)
    set(${ARG_OBJECT} ${object} PARENT_SCOPE)
  endif()
endfunction()
