# Odin's programs: odin, odin-sandbox and the workers link their libraries
# statically, libstdc++ included; only libc (and what odin loads on first
# use, libcurl) is shared. Every `odin exec -- true` starts three of them
# (odin, the launcher, the worker), every agent session more, and each shared
# library costs a process its mapping, relocations and page faults before
# main: odin-worker started in 7.1 ms of CPU with its eleven libraries, 3.8
# ms linked this way (docs/performance.md, "Start-up"). Tests, benchmarks and
# odin-rpc (gRPC, itself shared) keep the shared libraries.
#
# The network worker keeps libcurl and gumbo shared: they parse what comes
# from the network, so Debian's security updates must reach them without a
# rebuild, and that worker is not on a command's path. The other libraries'
# updates reach Odin at its next build (scripts/setup.sh).
#
# odin_dependency(NAME SHARED targets... [LINK items...] [STATIC archives...])
# makes NAME an interface library that compiles exactly as the SHARED
# targets do (their include directories, definitions and options, so a
# library's objects are the same whichever way a program links them) and
# links, into a program marked with odin_program(), the STATIC archives in
# their place, or the SHARED targets elsewhere. LINK items are linked either
# way. The choice is made per program: a generator expression in the link
# interface is read on the target being linked.

# The static archives of Debian's packages, and spdlog and fmt, which Debian
# ships shared only (scripts/build-spdlog.sh builds them from its source).
function(odin_find_archive var)
  find_library(${var} NAMES ${ARGN} NO_CACHE REQUIRED)
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()
find_library(SECCOMP_LIBRARY seccomp REQUIRED)
odin_find_archive(ODIN_A_PROTOBUF_LITE libprotobuf-lite.a)
odin_find_archive(ODIN_A_SQLITE libsqlite3.a)
odin_find_archive(ODIN_A_SECCOMP libseccomp.a)
odin_find_archive(ODIN_A_TREE_SITTER libtree-sitter.a)
odin_find_archive(ODIN_A_SODIUM libsodium.a)
odin_find_archive(ODIN_A_CMARK libcmark-gfm.a)
odin_find_archive(ODIN_A_CMARK_EXTENSIONS libcmark-gfm-extensions.a)
odin_find_archive(ODIN_A_EDIT libedit.a)
odin_find_archive(ODIN_A_TINFO libtinfo.a)
odin_find_archive(ODIN_A_BSD libbsd.a)
odin_find_archive(ODIN_A_MD libmd.a)
odin_find_archive(ODIN_A_RE2 libre2.a)
set(ODIN_SPDLOG_DIR ${CMAKE_SOURCE_DIR}/third_party/spdlog/lib)
if(NOT EXISTS ${ODIN_SPDLOG_DIR}/libspdlog.a OR NOT EXISTS ${ODIN_SPDLOG_DIR}/libfmt.a)
  message(FATAL_ERROR "third_party/spdlog is missing: run scripts/install-deps.sh (or scripts/build-spdlog.sh)")
endif()

function(odin_dependency name)
  cmake_parse_arguments(D "" "" "SHARED;LINK;STATIC" ${ARGN})
  add_library(${name} INTERFACE)
  foreach(t IN LISTS D_SHARED)
    if(TARGET ${t})
      target_include_directories(${name} SYSTEM INTERFACE $<TARGET_PROPERTY:${t},INTERFACE_INCLUDE_DIRECTORIES>)
      target_compile_definitions(${name} INTERFACE $<TARGET_PROPERTY:${t},INTERFACE_COMPILE_DEFINITIONS>)
      target_compile_options(${name} INTERFACE $<TARGET_PROPERTY:${t},INTERFACE_COMPILE_OPTIONS>)
    endif()
  endforeach()
  if(D_STATIC)
    list(JOIN D_STATIC "$<SEMICOLON>" static)
    list(JOIN D_SHARED "$<SEMICOLON>" shared)
    target_link_libraries(${name}
                          INTERFACE "$<LINK_ONLY:$<IF:$<BOOL:$<TARGET_PROPERTY:ODIN_PROGRAM>>,${static},${shared}>>")
  endif()
  if(D_LINK)
    target_link_libraries(${name} INTERFACE ${D_LINK})
  endif()
endfunction()

odin_dependency(odin_spdlog SHARED spdlog::spdlog fmt::fmt STATIC ${ODIN_SPDLOG_DIR}/libspdlog.a
                ${ODIN_SPDLOG_DIR}/libfmt.a)
odin_dependency(odin_protobuf_lite SHARED protobuf::libprotobuf-lite STATIC ${ODIN_A_PROTOBUF_LITE} LINK Threads::Threads)
odin_dependency(odin_sqlite SHARED SQLite::SQLite3 STATIC ${ODIN_A_SQLITE} LINK ${CMAKE_DL_LIBS} m)
odin_dependency(odin_seccomp SHARED ${SECCOMP_LIBRARY} STATIC ${ODIN_A_SECCOMP})
odin_dependency(odin_tree_sitter SHARED PkgConfig::TREESITTER STATIC ${ODIN_A_TREE_SITTER})
odin_dependency(odin_sodium SHARED PkgConfig::SODIUM STATIC ${ODIN_A_SODIUM})
odin_dependency(odin_cmark SHARED PkgConfig::CMARK STATIC ${ODIN_A_CMARK_EXTENSIONS} ${ODIN_A_CMARK})
odin_dependency(odin_re2 SHARED PkgConfig::RE2 STATIC ${ODIN_A_RE2} LINK Threads::Threads)
odin_dependency(odin_libedit SHARED PkgConfig::LIBEDIT STATIC ${ODIN_A_EDIT} ${ODIN_A_TINFO} ${ODIN_A_BSD} ${ODIN_A_MD})

# Marks a program to link the static archives above, and libstdc++ and
# libgcc statically. Their symbols stay out of its dynamic table
# (--exclude-libs), so a library loaded later (libcurl) never binds to them.
function(odin_program target)
  set_target_properties(${target} PROPERTIES ODIN_PROGRAM ON)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL)
endfunction()
