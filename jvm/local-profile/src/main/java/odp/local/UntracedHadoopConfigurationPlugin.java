package odp.local;

import java.util.Collections;
import java.util.Map;
import odp.hadoop.UntracedConfiguration;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * The local profile's Spark plugin ({@code spark.plugins}, set only by the Makefile's {@code ODP_LOCAL_JVM_OPTIONS}):
 * the session's Hadoop configuration loses its property sources ({@link UntracedConfiguration}) when the context
 * starts, before any copy of it is made. Every engine's session does the same as ODP builds it
 * ({@code etl/jvm.py} {@code ready_gateway}); the plugin keeps the local JVM's copies made before that without
 * sources too (docs/decisions/039).
 */
public final class UntracedHadoopConfigurationPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      @Override
      public Map<String, String> init(SparkContext context, PluginContext pluginContext) {
        UntracedConfiguration.forgetSources(context.hadoopConfiguration());
        return Collections.emptyMap();
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return null;
  }
}
