package odp.local;

import java.lang.reflect.Field;
import java.util.Collections;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * The local profile's Spark plugin ({@code spark.plugins}, set only by the Makefile's {@code ODP_LOCAL_JVM_OPTIONS}): the
 * session's Hadoop configuration keeps no record of which file each property came from.
 *
 * <p>Hadoop's {@link Configuration} remembers, for each of its about 960 properties, the resources that set it, and
 * {@code Configuration.write} gzips that list in a stream of its own per property: about 10 ms a copy, where the rest
 * of the copy is 1 ms. Spark and Hudi copy the configuration into task closures many times per commit (Hudi's storage
 * configuration travels in them), and read it back in every task. The sources only serve diagnostics
 * ({@code Configuration.getPropertySources}); the properties, their values and the final ones are untouched. Copies
 * made from the session's configuration ({@code new Configuration(conf)}) start without sources too
 * (docs/decisions/039).
 *
 * <p>A Hadoop class that adds a default resource on its first use (mapred-, hdfs-, yarn-default.xml) reloads every
 * configuration of the JVM, sources included: those classes are initialised first. Glue and EMR never name this
 * plugin.
 */
public final class UntracedHadoopConfigurationPlugin implements SparkPlugin {
  static final String[] DEFAULT_RESOURCE_CLASSES = {
    "org.apache.hadoop.mapred.JobConf",
    "org.apache.hadoop.hdfs.HdfsConfiguration",
    "org.apache.hadoop.yarn.conf.YarnConfiguration",
  };

  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      @Override
      public Map<String, String> init(SparkContext context, PluginContext pluginContext) {
        forgetSources(context.hadoopConfiguration());
        return Collections.emptyMap();
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return null;
  }

  /** Initialise the classes that add default resources, then drop {@code conf}'s property sources. */
  static void forgetSources(Configuration conf) {
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
