package odp.local;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The local profile's {@code file:} file system ({@code fs.file.impl}): Hadoop's checksummed {@link LocalFileSystem}
 * over {@link NioRawLocalFileSystem}, which sets permissions through Java instead of a {@code chmod} process.
 *
 * <p>Only a local Spark session names it (tests, the sandbox, the demo: {@code etl/spark_session.py}); Glue and EMR
 * write to S3 and keep Hadoop's own. Everything but how a permission is set is Hadoop's (docs/decisions/035).
 */
public class NioLocalFileSystem extends LocalFileSystem {
  public NioLocalFileSystem() {
    super(new NioRawLocalFileSystem());
  }
}
