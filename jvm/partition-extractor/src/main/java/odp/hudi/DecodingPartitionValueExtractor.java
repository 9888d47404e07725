package odp.hudi;

import java.util.List;
import java.util.stream.Collectors;

import org.apache.hudi.common.util.PartitionPathEncodeUtils;
import org.apache.hudi.hive.MultiPartKeysValueExtractor;
import org.apache.hudi.sync.common.model.PartitionValueExtractor;

/**
 * The partition values of a hive-style, URL-encoded partition path ({@code region=eu%2Fwest}), decoded
 * ({@code eu/west}): what Hudi's catalog sync registers for a table written with
 * {@code hoodie.datasource.write.partitionpath.urlencode=true}.
 *
 * <p>Hudi's {@link MultiPartKeysValueExtractor} splits the path into its folders and each folder at {@code =};
 * its values are the folder text as written, still encoded, and Hudi 1.0.2's hms sync registers them so
 * (the catalog and Athena would show {@code eu%2Fwest}). This class splits the same way, then undoes the
 * encoding with Hudi's own {@link PartitionPathEncodeUtils#unescapePathName}, the inverse of what the writer
 * applied. Only for encoded tables: a table written unencoded keeps {@link MultiPartKeysValueExtractor}
 * (a literal {@code %} in its paths is no escape).
 */
public class DecodingPartitionValueExtractor implements PartitionValueExtractor {
  private static final long serialVersionUID = 1L;

  private final MultiPartKeysValueExtractor split = new MultiPartKeysValueExtractor();

  @Override
  public List<String> extractPartitionValuesInPath(String partitionPath) {
    return split.extractPartitionValuesInPath(partitionPath).stream()
        .map(PartitionPathEncodeUtils::unescapePathName)
        .collect(Collectors.toList());
  }
}
