package odp.hadoop;

import java.lang.reflect.Field;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * A Hadoop configuration without the record of which file set each property ({@code updatingResource}), on every
 * engine: ODP's Python calls {@link #forgetSources} on the session's configuration as it builds the session
 * ({@code etl/jvm.py} {@code ready_gateway}); the local profile's Spark plugin does it when the context starts.
 *
 * <p>Hadoop's {@link Configuration} remembers, for each of its about 960 properties, the resources that set it, and
 * {@code Configuration.write} gzips that list in a stream of its own per property: about 10 ms a copy, where the rest
 * of the copy is 1 ms. Spark and Hudi copy the configuration into task closures many times per commit (Hudi's storage
 * configuration travels in them), and every task reads it back. The sources only serve diagnostics
 * ({@code Configuration.getPropertySources}); the properties, their values and the final ones are untouched. Copies
 * made from the session's configuration ({@code new Configuration(conf)}) start without sources too
 * (docs/decisions/039, 050).
 *
 * <p>A Hadoop class that adds a default resource on its first use (mapred-, hdfs-, yarn-default.xml) reloads every
 * configuration of the JVM, sources included: those classes are initialised first.
 */
public final class UntracedConfiguration {
  static final String[] DEFAULT_RESOURCE_CLASSES = {
    "org.apache.hadoop.mapred.JobConf",
    "org.apache.hadoop.hdfs.HdfsConfiguration",
    "org.apache.hadoop.yarn.conf.YarnConfiguration",
  };

  private UntracedConfiguration() {}

  /**
   * Initialise the classes that add default resources, then drop {@code conf}'s property sources.
   *
   * @throws IllegalStateException Hadoop's {@code Configuration} has no {@code updatingResource} map to clear
   */
  public static void forgetSources(Configuration conf) {
    ClassLoader loader = Configuration.class.getClassLoader();
    for (String name : DEFAULT_RESOURCE_CLASSES) {
      try {
        Class.forName(name, true, loader);
      } catch (ClassNotFoundException absent) {
        // not on this class path: it can never add its resource either
      }
    }
    conf.size(); // loads the properties, and with them their sources
    try {
      Field sources = Configuration.class.getDeclaredField("updatingResource");
      sources.setAccessible(true);
      ((Map<?, ?>) sources.get(conf)).clear();
    } catch (ReflectiveOperationException changed) {
      throw new IllegalStateException("Hadoop's Configuration has no updatingResource field to clear", changed);
    }
  }
}
