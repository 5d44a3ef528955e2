#include "remote/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "base/file_util.h"

namespace odin {

namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Reads a file that decides who is trusted, judged by what was opened (no
// window for a swap between a look and the read). It must be a regular
// file owned by us (or root) that no one else may change; a secret, one no
// one else may read either. Symlinks are followed: Kubernetes mounts each
// key of a Secret as one (into its ..data directory), and what counts is
// the file they lead to.
StatusOr<std::string> ReadTrustedFile(const std::string& path, bool secret) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return PosixError(path, errno);
  struct stat st;
  Status bad = Status::OK();
  if (fstat(fd, &st) != 0) {
    bad = PosixError(path, errno);
  } else if (!S_ISREG(st.st_mode)) {
    bad = Status::InvalidArgument(path, "is not a regular file");
  } else if (st.st_uid != geteuid() && st.st_uid != 0) {
    bad = Status::PermissionDenied(path, "belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  } else if (secret && (st.st_mode & 077) != 0) {
    bad = Status::PermissionDenied(path, "a secret key others may read is refused (chmod 600 it)");
  } else if ((st.st_mode & 022) != 0) {
    bad = Status::PermissionDenied(path, "others may change it (chmod go-w it)");
  } else if (st.st_size > (1 << 20)) {
    bad = Status::InvalidArgument(path, "is larger than 1 MiB");
  }
  std::string text;
  char buf[8192];
  while (bad.ok()) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) bad = PosixError(path, errno);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (!bad.ok()) return bad;
  return text;
}

// Writes a new file (never over one), with mode.
Status WriteNew(const std::string& path, const std::string& text, int mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return PosixError("cannot create " + path, errno);
  Status s = WriteAll(fd, text, path);
  if (s.ok() && fsync(fd) != 0) s = PosixError(path, errno);
  close(fd);
  if (!s.ok()) unlink(path.c_str());
  return s;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string DefaultKeysDir() {
  const char* xdg = getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return JoinPath(JoinPath(xdg, "odin"), "keys");
  const char* home = getenv("HOME");
  return JoinPath(home != nullptr && *home != '\0' ? home : "/", ".config/odin/keys");
}

StatusOr<std::vector<std::string>> GenerateKeys(const std::string& dir, const std::vector<std::string>& hosts) {
  for (const std::string& h : hosts) {
    if (!ValidName(h)) {
      return Status::InvalidArgument("host name '" + h + "'", "use letters, digits, '.', '_' and '-'");
    }
  }
  RETURN_IF_ERROR(MakeDirs(JoinPath(dir, "hosts"), 0700));
  chmod(dir.c_str(), 0700);
  std::vector<std::string> wrote;
  std::string coordinator = JoinPath(dir, "coordinator.key");
  if (!Exists(coordinator)) {
    ASSIGN_OR_RETURN(CurveKeyPair pair, GenerateCurveKeyPair());
    RETURN_IF_ERROR(WriteNew(coordinator, pair.secret_key + "\n", 0600));
    unlink(JoinPath(dir, "coordinator.pub").c_str());
    RETURN_IF_ERROR(WriteNew(JoinPath(dir, "coordinator.pub"), pair.public_key + "\n", 0644));
    wrote.push_back(coordinator + " (secret: the coordinator's alone)");
    wrote.push_back(JoinPath(dir, "coordinator.pub") + " (give it to every host)");
  }
  for (const std::string& h : hosts) {
    std::string key = JoinPath(dir, "hosts/" + h + ".key");
    if (Exists(key)) continue;
    ASSIGN_OR_RETURN(CurveKeyPair pair, GenerateCurveKeyPair());
    RETURN_IF_ERROR(WriteNew(key, pair.secret_key + "\n", 0600));
    std::string pub = JoinPath(dir, "hosts/" + h + ".pub");
    unlink(pub.c_str());
    RETURN_IF_ERROR(WriteNew(pub, pair.public_key + "\n", 0644));
    std::string allowed = JoinPath(dir, "allowed_hosts");
    int fd = open(allowed.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return PosixError("cannot open " + allowed, errno);
    Status s = WriteAll(fd, pair.public_key + " " + h + "\n", allowed);
    close(fd);
    RETURN_IF_ERROR(s);
    wrote.push_back(key + " (secret: host " + h + "'s alone)");
  }
  return wrote;
}

StatusOr<CurveKeyPair> LoadKeyPair(const std::string& secret_file) {
  ASSIGN_OR_RETURN(std::string text, ReadTrustedFile(secret_file, /*secret=*/true));
  CurveKeyPair pair;
  pair.secret_key = Trimmed(text);
  StatusOr<std::string> pub = CurvePublicKey(pair.secret_key);
  if (!pub.ok()) return Status::InvalidArgument(secret_file, "does not hold a CURVE secret key");
  pair.public_key = *pub;
  return pair;
}

StatusOr<std::string> LoadPublicKey(const std::string& file_or_key) {
  // A file first: a path can be 40 characters of Z85's alphabet too.
  if (!Exists(file_or_key) && IsCurveKey(file_or_key)) return file_or_key;
  // The host's trust anchor: whoever holds its secret may start workers here.
  ASSIGN_OR_RETURN(std::string text, ReadTrustedFile(file_or_key, /*secret=*/false));
  std::string key = Trimmed(text);
  if (!IsCurveKey(key)) return Status::InvalidArgument(file_or_key, "does not hold a CURVE public key");
  return key;
}

StatusOr<std::set<std::string>> LoadAllowedHosts(const std::string& file) {
  ASSIGN_OR_RETURN(std::string text, ReadTrustedFile(file, /*secret=*/false));
  std::set<std::string> keys;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::string key = line.substr(0, line.find(' '));
    if (!IsCurveKey(key)) {
      return Status::InvalidArgument(file + ":" + std::to_string(n), "not a CURVE public key");
    }
    keys.insert(key);
  }
  return keys;
}

}  // namespace odin
