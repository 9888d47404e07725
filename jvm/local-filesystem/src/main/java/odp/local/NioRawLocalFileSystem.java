package odp.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's {@link RawLocalFileSystem} with {@link #setPermission} through {@link Files#setPosixFilePermissions}.
 *
 * <p>Without Hadoop's native library (Spark's pip wheel has none) Hadoop 3.3.4 sets a permission by starting
 * {@code chmod}, and it sets one on every file it creates and every folder it makes: a Hudi commit starts dozens of
 * processes, about 6 ms each from a Spark driver's JVM on 2 cores, against 0.05 ms through Java. The mode bits set
 * are the same (the sticky bit, which no local table uses, is not set); a missing file fails with an
 * {@link IOException} as {@code chmod}'s exit status did.
 */
public class NioRawLocalFileSystem extends RawLocalFileSystem {
  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
  };

  @Override
  public void setPermission(Path path, FsPermission permission) throws IOException {
    Files.setPosixFilePermissions(pathToFile(path).toPath(), posix(permission));
  }

  /** The owner, group and others bits of {@code permission} (bit 0 is others' execute, as in a Unix mode). */
  static Set<PosixFilePermission> posix(FsPermission permission) {
    int mode = permission.toShort();
    Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        bits.add(BITS[bit]);
      }
    }
    return bits;
  }
}
