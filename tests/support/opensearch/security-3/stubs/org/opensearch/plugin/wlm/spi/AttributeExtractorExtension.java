// A compile-time stand-in (see ../../../../../../README.md): the workload-management plugin's SPI jar is not on Maven
// Central and the integ-test distribution does not ship that plugin. Compiled against, never bundled: the plugin's
// class implementing it is loaded only by workload-management, which then brings the real interface.
package org.opensearch.plugin.wlm.spi;

import org.opensearch.rule.attribute_extractor.AttributeExtractor;

public interface AttributeExtractorExtension {
    AttributeExtractor<String> getAttributeExtractor();
}
