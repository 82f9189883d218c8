# frozen_string_literal: true

require 'fileutils'
require_relative 'results'

module CloneArmyBench
  # One run's record as it is measured: the scale, the figures so far and the raw
  # readings in a private work directory, written out as <stamp>.json and .md
  # with the raw readings in <stamp>.raw/ (what make bench-derive reads again).
  class Record
    # The raw readings kept beside the result, as make bench-derive reads them.
    RAW = ['pss-*', 'booted-*', 'runs', 'reports', 'times', 'report.json', 'start.json'].freeze

    attr_reader :work, :stamp, :json, :md, :raw, :page, :figures, :scale

    def initialize(results:, stamp:, work: nil)
      @results = results
      @stamp = stamp
      @work = work
      @json = File.join(results, "#{stamp}.json")
      @md = File.join(results, "#{stamp}.md")
      @raw = File.join(results, "#{stamp}.raw")
      @page = File.join(results, "#{stamp}.html")
      @figures = []
      @scale = {}
    end

    # The result's paths, as the plan names them.
    def paths
      { json: @json, md: @md, raw: @raw, page: @page }
    end

    # A path in the work directory.
    def [](name)
      File.join(@work, name)
    end

    def meta(key, value)
      @scale[key] = value
    end

    # Adds a figure (Results.figure's fields); returns it.
    def fig(**fields)
      Results.figure(**fields).tap { |f| @figures << f }
    end

    def figure?(key)
      @figures.any? { |f| f['key'] == key }
    end

    # Writes the result with this status and copies the raw readings; returns the table.
    def write(status, finished: Time.now.utc)
      FileUtils.mkdir_p(@raw)
      doc = Results.document(started: @stamp, finished: finished.strftime('%Y-%m-%dT%H:%M:%SZ'), status: status,
                             scale: @scale, figures: @figures)
      File.write(@json, Results.json(doc))
      File.write(@md, Results.markdown(doc))
      # A run that works in its raw directory (checkin) has its readings there already.
      unless File.expand_path(@work.to_s) == File.expand_path(@raw)
        RAW.flat_map { |pattern| Dir.glob(self[pattern]) }.select { |f| File.file?(f) }
           .each { |f| FileUtils.cp(f, @raw) }
      end
      Results.markdown(doc)
    end
  end
end
