package odp.hudi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.hudi.avro.model.HoodieCompactionOperation;
import org.apache.hudi.avro.model.HoodieCompactionPlan;
import org.apache.hudi.common.model.FileSlice;
import org.apache.hudi.common.model.HoodieBaseFile;
import org.apache.hudi.common.util.collection.Pair;
import org.apache.hudi.config.HoodieWriteConfig;
import org.apache.hudi.table.action.compact.strategy.BoundedIOCompactionStrategy;

/**
 * Compacts a MERGE_ON_READ file group only when its logs matter: when their bytes reach a share of its base
 * file's ({@value #LOG_SHARE}, default {@value #DEFAULT_LOG_SHARE}), when it has
 * {@code hoodie.compaction.logfile.num.threshold} log files or more, or when it has no base file.
 *
 * <p>Hudi's default strategy compacts every file group that has a log file. A table whose changes scatter (a fact
 * table's late updates: one row in each of many old partitions) then rewrites nearly all of itself at each
 * compaction, to merge logs of a few rows. Here a group with a small log waits for the next schedule, until its
 * logs grow or their count reaches the threshold, so what compaction writes follows what changed. Hudi 1.0.2 can
 * chain its log-size and log-count strategies only with AND ({@code CompositeCompactionStrategy}); this is their
 * OR, with the log size taken relative to the base file.
 *
 * <p>A group left out is reported as a missing partition (as Hudi's own filtering strategies do), so the next
 * incremental schedule looks at its partition again. The plan stays bounded by {@code hoodie.compaction.target.io}
 * ({@link BoundedIOCompactionStrategy}), the largest log shares first.
 */
public class LogShareCompactionStrategy extends BoundedIOCompactionStrategy {
  private static final long serialVersionUID = 1L;

  /** The write option: log bytes over base-file bytes from which a file group is compacted. */
  public static final String LOG_SHARE = "odp.compaction.log.share";

  public static final double DEFAULT_LOG_SHARE = 0.2;

  /** The metric this strategy adds to each operation: its base file's bytes (0 without one). */
  static final String BASE_FILE_SIZE = "ODP_BASE_FILE_SIZE";

  @Override
  public Map<String, Double> captureMetrics(HoodieWriteConfig config, FileSlice slice) {
    Map<String, Double> metrics = super.captureMetrics(config, slice);
    metrics.put(BASE_FILE_SIZE, (double) slice.getBaseFile().map(HoodieBaseFile::getFileSize).orElse(0L));
    return metrics;
  }

  @Override
  public Pair<List<HoodieCompactionOperation>, List<String>> orderAndFilter(
      HoodieWriteConfig config,
      List<HoodieCompactionOperation> operations,
      List<HoodieCompactionPlan> pendingCompactionPlans) {
    double share = config.getProps().getDouble(LOG_SHARE, DEFAULT_LOG_SHARE);
    long maxLogFiles = config.getCompactionLogFileNumThreshold();
    List<HoodieCompactionOperation> due = new ArrayList<>();
    List<String> waiting = new ArrayList<>();
    for (HoodieCompactionOperation operation : operations) {
      if (isDue(operation, share, maxLogFiles)) {
        due.add(operation);
      } else {
        waiting.add(operation.getPartitionPath());
      }
    }
    due.sort(Comparator.comparingDouble(LogShareCompactionStrategy::logShare).reversed());
    Pair<List<HoodieCompactionOperation>, List<String>> bounded = super.orderAndFilter(config, due, pendingCompactionPlans);
    if (!config.isIncrementalTableServiceEnabled()) {
      return bounded;
    }
    waiting.addAll(bounded.getRight());
    return Pair.of(bounded.getLeft(), waiting.stream().distinct().collect(Collectors.toList()));
  }

  /** Whether a file slice is due: no base file (or its size unknown), enough log files, or a large enough log share. */
  static boolean isDue(HoodieCompactionOperation operation, double share, long maxLogFiles) {
    List<String> logs = operation.getDeltaFilePaths();
    if (maxLogFiles > 0 && logs != null && logs.size() >= maxLogFiles) {
      return true;
    }
    return logShare(operation) >= share;
  }

  /** Log bytes over base-file bytes; infinite for a slice without a base file or whose base size is unknown. */
  static double logShare(HoodieCompactionOperation operation) {
    Map<String, Double> metrics = operation.getMetrics();
    double base = metrics.getOrDefault(BASE_FILE_SIZE, 0.0);
    if (operation.getDataFilePath() == null || base <= 0) {
      return Double.POSITIVE_INFINITY;
    }
    return metrics.getOrDefault(TOTAL_LOG_FILE_SIZE, 0.0) / base;
  }
}
