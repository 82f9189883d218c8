# frozen_string_literal: true

require 'open3'
require 'tempfile'
require 'zlib'

module CloneArmyBench
  # The pages of recorded runs, made from the timelines the results keep
  # (<stamp>.raw/timeline.jsonl.gz beside a bench result, <name>.jsonl.gz in a
  # lab folder) by the helper's own `report --from ... --format html`. The pages
  # are not committed: they are the helper's rendering of the data, made again
  # by any later helper.
  module Pages
    module_function

    # [timeline, page] for every timeline under results.
    def plan(results)
      bench = Dir.glob(File.join(results, '*.raw', 'timeline.jsonl.gz')).map do |t|
        [t, "#{File.dirname(t).delete_suffix('.raw')}.html"]
      end
      lab = Dir.glob(File.join(results, '*', '*.jsonl.gz')).reject { |t| t.include?('.raw/') }.map do |t|
        [t, "#{t.delete_suffix('.jsonl.gz')}.html"]
      end
      (bench + lab).sort
    end

    # Makes each page with helper; returns the pages written.
    def make(results, helper)
      plan(results).map do |timeline, page|
        page(timeline, page, helper)
        page
      end
    end

    # Makes one page from a timeline with helper; returns the helper's answer.
    # The timeline is unpacked to a private temporary file, as the helper reads a
    # plain file.
    def page(timeline, page, helper)
      Tempfile.create(['timeline', '.jsonl']) do |plain|
        Zlib::GzipReader.open(timeline) { |gz| IO.copy_stream(gz, plain) }
        plain.close
        out, err, status = Open3.capture3(helper, 'report', '--from', plain.path, '--format', 'html', '--output', page)
        raise "#{helper} report --from #{timeline} failed: #{out}#{err}" unless status.success?

        out
      end
    end
  end
end
